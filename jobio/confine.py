"""What a process gives up before it reads a log a user sent: the worker's identity,
the network, programs, and all but a little memory, CPU, processes and files. Used by
the Darshan log reader's child (jobio/sandbox.py) once it has imported its code and
before it opens the log; no Django here.

libdarshan-util is C and has known faults on damaged logs (a double free on one cut
short): whatever a crafted log makes it do, it does as a user who owns nothing and
can read nothing of the portal's (the JWT key, the database password, the broker),
with no socket to send anything anywhere and no program to start.

After `confine`, within this process:
- the real, effective and saved UID and GID are the sandbox's, with no supplementary
  groups (a root worker loses every capability with them);
- no new privilege can be gained (PR_SET_NO_NEW_PRIVS), and a seccomp filter makes
  socket(), socketpair(), io_uring_setup() (its rings make sockets too), execve() and
  execveat() fail with EACCES; a system call of another ABI kills the process;
- RLIMIT_AS, RLIMIT_CPU, RLIMIT_NPROC, RLIMIT_NOFILE bound it, RLIMIT_FSIZE is 0 (it
  writes no file) and RLIMIT_CORE 0 (no core dump of what it read);
- its working directory is "/".
"""

import ctypes
import errno
import os
import platform
import resource
import struct

# prctl(2) and seccomp(2)
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
SECCOMP_RET_KILL_PROCESS = 0x80000000
SECCOMP_RET_ERRNO = 0x00050000
SECCOMP_RET_ALLOW = 0x7FFF0000
# Classic BPF: load a word of seccomp_data, jump if equal / greater or equal, return.
BPF_LD_W_ABS = 0x20
BPF_JEQ_K = 0x15
BPF_JGE_K = 0x35
BPF_RET_K = 0x06
# seccomp_data: int nr; __u32 arch; ...
NR_OFFSET, ARCH_OFFSET = 0, 4
X32_SYSCALL_BIT = 0x40000000

# Per machine: its AUDIT_ARCH and the numbers of the calls refused.
ARCHITECTURES = {
    "x86_64": {
        "arch": 0xC000003E,
        "refused": {"socket": 41, "socketpair": 53, "execve": 59, "execveat": 322,
                    "io_uring_setup": 425},
    },
    "aarch64": {
        "arch": 0xC00000B7,
        "refused": {"socket": 198, "socketpair": 199, "execve": 221, "execveat": 281,
                    "io_uring_setup": 425},
    },
}  # fmt: skip

NPROC = 32  # threads count: numpy's, the reader's
NOFILE = 32


class ConfineError(Exception):
    """The process could not give up what it must: it must not read the log."""


def confine(uid: int, gid: int, *, memory_bytes: int, cpu_seconds: int) -> None:
    """Makes this process the sandbox (see the module's docstring), or raises
    ConfineError and reads nothing. The order matters: limits while still allowed to
    set them, then the identity (which takes the capabilities), then the filter."""
    if uid == 0 or gid == 0:
        raise ConfineError("the sandbox user must not be root")
    if os.getuid() == uid:
        raise ConfineError(
            "the worker itself runs as the sandbox user, so the reader would keep what the "
            "worker holds: run the worker as root (it drops to the sandbox user per log)"
        )
    for limit, value in (
        (resource.RLIMIT_AS, memory_bytes),
        (resource.RLIMIT_CPU, cpu_seconds),
        (resource.RLIMIT_CORE, 0),
        (resource.RLIMIT_FSIZE, 0),
        (resource.RLIMIT_NPROC, NPROC),
        (resource.RLIMIT_NOFILE, NOFILE),
    ):
        resource.setrlimit(limit, (value, value))
    try:
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
    except PermissionError:
        raise ConfineError(
            f"cannot switch to UID {uid}: the worker must run as root (or with CAP_SETUID "
            "and CAP_SETGID) to start each log's reader as the sandbox user"
        ) from None
    if os.getresuid() != (uid, uid, uid) or os.getresgid() != (gid, gid, gid):
        raise ConfineError(f"still not UID {uid} after switching")
    os.chdir("/")
    _no_new_privileges()
    _filter_system_calls()


def _no_new_privileges() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise ConfineError(f"prctl(PR_SET_NO_NEW_PRIVS): {os.strerror(ctypes.get_errno())}")


def _filter_system_calls() -> None:
    machine = ARCHITECTURES.get(platform.machine())
    if machine is None:
        raise ConfineError(f"no system call filter for this machine ({platform.machine()})")
    refused = list(machine["refused"].values())
    # Each instruction: (code, jump if true, jump if false, k); a jump skips that many.
    program = [
        (BPF_LD_W_ABS, 0, 0, ARCH_OFFSET),
        (BPF_JEQ_K, 1, 0, machine["arch"]),  # our ABI: go on; else
        (BPF_RET_K, 0, 0, SECCOMP_RET_KILL_PROCESS),
        (BPF_LD_W_ABS, 0, 0, NR_OFFSET),
        (BPF_JGE_K, 0, 1, X32_SYSCALL_BIT),  # x32's numbers: kill
        (BPF_RET_K, 0, 0, SECCOMP_RET_KILL_PROCESS),
    ]
    for i, number in enumerate(refused):
        # To the ERRNO return after the last check and the ALLOW.
        program.append((BPF_JEQ_K, len(refused) - i, 0, number))
    program += [
        (BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW),
        (BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | errno.EACCES),
    ]
    filters = b"".join(struct.pack("=HBBI", *instruction) for instruction in program)
    buffer = ctypes.create_string_buffer(filters)

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = SockFprog(len(program), ctypes.addressof(buffer))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise ConfineError(f"prctl(PR_SET_SECCOMP): {os.strerror(ctypes.get_errno())}")
