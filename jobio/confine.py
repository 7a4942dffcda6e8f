"""What a process gives up before it reads a log a user sent: the network, programs,
other processes, and all but a little memory, CPU, and files. Used by the Darshan log
reader's child (jobio/sandbox.py) once it has imported its code and before it opens the
log; no Django here.

libdarshan-util is C and has known faults on damaged logs (a double free on one cut
short): whatever a crafted log makes it do, it does as a user who owns nothing and
can read nothing of the portal's (the JWT key, the database password, the broker),
with no socket to send anything anywhere, no program to start and no process to reach.

The child is started as the sandbox user by the small program storagelab-sandbox
(docker/sandbox/), the only part of the portal with a capability (CAP_SETUID and
CAP_SETGID, as file capabilities), which stays its parent and takes it down with it.
`confine` checks that the identity is the sandbox's, then, within this process:
- no new privilege can be gained (PR_SET_NO_NEW_PRIVS), and no other process of the
  sandbox user (another reader) may trace it or read its memory (not dumpable);
- RLIMIT_AS, RLIMIT_CPU, RLIMIT_NPROC, RLIMIT_NOFILE bound it, RLIMIT_FSIZE is 0 (it
  writes no file) and RLIMIT_CORE 0 (no core dump of what it read);
- its working directory is "/";
- it may open no file by its path (Landlock: a ruleset that handles every right the
  kernel knows and grants none): not /etc/passwd, not the portal's logs under
  /var/log/storagelab, which everyone may read, not a directory to list. What it was
  handed stays open to it: its descriptors, and the log's memory file reopened by
  /proc/self/fd/N (a memory file is on no mount a path reaches, which Landlock lets
  through). On a kernel without Landlock (before Linux 5.13, or not among its LSMs)
  confine refuses, and no log is read;
- a seccomp filter allows only the system calls a reader makes (reading, memory, time,
  signals to itself, ending); every other one (a socket, a program, a new process or
  thread, tracing, another process's memory, io_uring, listing a directory, ...) fails
  with EACCES, and a system call of another ABI kills the process.
"""

import ctypes
import errno
import os
import platform
import resource
import struct

# prctl(2) and seccomp(2)
PR_SET_DUMPABLE = 4
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
BPF_JMP_JA = 0x05
BPF_RET_K = 0x06
# seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6].
NR_OFFSET, ARCH_OFFSET, ARGS_OFFSET = 0, 4, 16
X32_SYSCALL_BIT = 0x40000000
TCGETS = 0x5401  # isatty()

# landlock(7): the same numbers on x86_64 and aarch64 (the generic table).
LANDLOCK_CREATE_RULESET, LANDLOCK_RESTRICT_SELF = 444, 446
LANDLOCK_CREATE_RULESET_VERSION = 1

# What a reader does once confined (strace of every log in tests/jobio/logs/, and of
# one that aborts or runs out of memory): read its files, map memory, tell the time,
# handle and raise its own signals, end. Calls only one ABI has are in its own table.
# Not getdents64: it imports nothing once confined, so it lists no directory.
ALLOWED = (
    "read", "write", "readv", "writev", "pread64", "lseek", "close", "openat", "fstat",
    "newfstatat", "statx", "fcntl", "readlinkat", "faccessat", "faccessat2", "getcwd",
    "dup", "dup3", "fadvise64",
    "mmap", "munmap", "mremap", "mprotect", "brk", "madvise", "membarrier",
    "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "sigaltstack",
    "futex", "set_robust_list", "rseq", "sched_yield", "sched_getaffinity",
    "getpid", "gettid", "getppid", "getuid", "geteuid", "getgid", "getegid", "getgroups",
    "getresuid", "getresgid",
    "clock_gettime", "clock_getres", "gettimeofday", "nanosleep", "clock_nanosleep",
    "getrandom", "uname", "sysinfo", "getrlimit",
    "exit", "exit_group",
)  # fmt: skip
# Allowed only so: signals to itself (abort() raises SIGABRT), isatty(), reading a limit.
TO_ITSELF = ("kill", "tkill", "tgkill")

ARCHITECTURES = {
    "x86_64": {
        "arch": 0xC000003E,
        "numbers": {
            "read": 0, "write": 1, "open": 2, "close": 3, "stat": 4, "fstat": 5, "lstat": 6,
            "lseek": 8, "mmap": 9, "mprotect": 10, "munmap": 11, "brk": 12,
            "rt_sigaction": 13, "rt_sigprocmask": 14, "rt_sigreturn": 15, "ioctl": 16,
            "pread64": 17, "readv": 19, "writev": 20, "access": 21, "sched_yield": 24,
            "mremap": 25, "madvise": 28, "dup": 32, "dup2": 33, "nanosleep": 35,
            "getpid": 39, "exit": 60, "kill": 62, "uname": 63, "fcntl": 72, "getcwd": 79,
            "readlink": 89, "gettimeofday": 96, "getrlimit": 97, "sysinfo": 99,
            "getuid": 102, "getgid": 104, "geteuid": 107, "getegid": 108, "getppid": 110,
            "getgroups": 115, "getresuid": 118, "getresgid": 120,
            "sigaltstack": 131, "gettid": 186, "tkill": 200, "futex": 202,
            "sched_getaffinity": 204, "getdents64": 217, "fadvise64": 221,
            "clock_gettime": 228, "clock_getres": 229, "clock_nanosleep": 230,
            "exit_group": 231, "tgkill": 234, "openat": 257, "newfstatat": 262,
            "readlinkat": 267, "faccessat": 269, "set_robust_list": 273, "dup3": 292,
            "prlimit64": 302, "getrandom": 318, "membarrier": 324, "statx": 332,
            "rseq": 334, "faccessat2": 439,
        },
        # The old calls of this ABI that glibc and Python still make.
        "also": ("open", "stat", "lstat", "access", "readlink", "dup2"),
    },
    "aarch64": {
        "arch": 0xC00000B7,
        "numbers": {
            "getcwd": 17, "dup": 23, "dup3": 24, "fcntl": 25, "ioctl": 29, "faccessat": 48,
            "openat": 56, "close": 57, "getdents64": 61, "lseek": 62, "read": 63,
            "write": 64, "readv": 65, "writev": 66, "pread64": 67, "readlinkat": 78,
            "newfstatat": 79, "fstat": 80, "exit": 93, "exit_group": 94, "futex": 98,
            "set_robust_list": 99, "nanosleep": 101, "clock_gettime": 113,
            "clock_getres": 114, "clock_nanosleep": 115, "sched_getaffinity": 123,
            "sched_yield": 124, "kill": 129, "tkill": 130, "tgkill": 131,
            "sigaltstack": 132, "rt_sigaction": 134, "rt_sigprocmask": 135,
            "rt_sigreturn": 139, "uname": 160, "getrlimit": 163, "gettimeofday": 169,
            "getpid": 172, "getppid": 173, "getuid": 174, "geteuid": 175, "getgid": 176,
            "getegid": 177, "gettid": 178, "sysinfo": 179, "getgroups": 158,
            "getresuid": 148, "getresgid": 150, "brk": 214, "munmap": 215,
            "mremap": 216, "mmap": 222, "fadvise64": 223, "mprotect": 226, "madvise": 233,
            "prlimit64": 261, "getrandom": 278, "membarrier": 283, "statx": 291,
            "rseq": 293, "faccessat2": 439,
        },
        "also": (),
    },
}  # fmt: skip

NPROC = 1  # per UID: it starts nothing (and the filter refuses it anyway)
NOFILE = 32


class ConfineError(Exception):
    """The process could not give up what it must: it must not read the log."""


def confine(uid: int, gid: int, *, memory_bytes: int, cpu_seconds: int) -> None:
    """Makes this process the sandbox (see the module's docstring), or raises
    ConfineError and reads nothing. The order matters: the identity first (it is
    storagelab-sandbox's to give), then limits, then the filter, which allows no
    further change."""
    if uid == 0 or gid == 0:
        raise ConfineError("the sandbox user must not be root")
    if os.getresuid() != (uid, uid, uid) or os.getresgid() != (gid, gid, gid):
        raise ConfineError(
            f"the reader runs as UID {os.getuid()}, not the sandbox user's {uid}: "
            "storagelab-sandbox starts it as the UID it was built for (docker/sandbox/), "
            "which must be DARSHAN_SANDBOX_USER's"
        )
    if os.getgroups():
        raise ConfineError("the reader still has supplementary groups")
    for limit, value in (
        (resource.RLIMIT_AS, memory_bytes),
        (resource.RLIMIT_CPU, cpu_seconds),
        (resource.RLIMIT_CORE, 0),
        (resource.RLIMIT_FSIZE, 0),
        (resource.RLIMIT_NOFILE, NOFILE),
        (resource.RLIMIT_NPROC, NPROC),
    ):
        resource.setrlimit(limit, (value, value))
    os.chdir("/")
    _prctl(PR_SET_DUMPABLE, 0, "PR_SET_DUMPABLE")
    _prctl(PR_SET_NO_NEW_PRIVS, 1, "PR_SET_NO_NEW_PRIVS")
    _open_no_path()
    _filter_system_calls(os.getpid())


def _prctl(option: int, value: int, name: str) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(option, value, 0, 0, 0) != 0:
        raise ConfineError(f"prctl({name}): {os.strerror(ctypes.get_errno())}")


def landlock_rights(abi: int) -> tuple[int, int, int]:
    """Every right Landlock ABI `abi` knows (files, TCP, scopes), each a bit mask: the
    kernel refuses a bit it does not know. Files: 13 rights in ABI 1 (execute, read,
    write, list, make and remove each kind), REFER in 2, TRUNCATE in 3, IOCTL_DEV in 5;
    TCP bind and connect in 4; abstract Unix sockets and signals scoped in 6."""
    files = (1 << {1: 13, 2: 14, 3: 15, 4: 15}.get(abi, 16)) - 1
    network = 0b11 if abi >= 4 else 0
    scoped = 0b11 if abi >= 6 else 0
    return files, network, scoped


def _open_no_path() -> None:
    """Restricts this process to a Landlock domain that grants no right on any file:
    it opens nothing by a path from now on. Needs PR_SET_NO_NEW_PRIVS first."""
    libc = ctypes.CDLL(None, use_errno=True)
    abi = libc.syscall(
        LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0), LANDLOCK_CREATE_RULESET_VERSION
    )
    if abi < 1:
        raise ConfineError(
            f"the kernel has no Landlock ({os.strerror(ctypes.get_errno())}), which keeps a "
            "reader from opening any other file: Linux 5.13 or later, with landlock among "
            "its security modules (CONFIG_LSM, or lsm= at boot)"
        )
    files, network, scoped = landlock_rights(abi)
    # struct landlock_ruleset_attr grew a field in ABI 4 and in 6: the size says which.
    attr = struct.pack("=QQQ", files, network, scoped)[: 24 if abi >= 6 else 16 if abi >= 4 else 8]
    buffer = ctypes.create_string_buffer(attr, len(attr))
    ruleset = libc.syscall(LANDLOCK_CREATE_RULESET, buffer, ctypes.c_size_t(len(attr)), 0)
    if ruleset < 0:
        raise ConfineError(f"landlock_create_ruleset: {os.strerror(ctypes.get_errno())}")
    try:
        if libc.syscall(LANDLOCK_RESTRICT_SELF, ruleset, 0) != 0:
            raise ConfineError(f"landlock_restrict_self: {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(ruleset)


def _arg(n: int, high: bool = False) -> int:
    """Where argument n's low (or high) 32 bits are in seccomp_data (little-endian)."""
    return ARGS_OFFSET + 8 * n + (4 if high else 0)


def program(machine: dict, pid: int) -> list[tuple[int, int, int, int]]:
    """The filter: (code, jump if true, jump if false, k) each, as the kernel takes it.
    Jumps are written to labels and resolved at the end ("allow", "refuse")."""
    numbers = machine["numbers"]
    allowed = [numbers[name] for name in (*ALLOWED, *machine["also"])]
    code: list[tuple] = [
        (BPF_LD_W_ABS, 0, 0, ARCH_OFFSET),
        (BPF_JEQ_K, 1, 0, machine["arch"]),  # our ABI: go on; else
        (BPF_RET_K, 0, 0, SECCOMP_RET_KILL_PROCESS),
        (BPF_LD_W_ABS, 0, 0, NR_OFFSET),
        (BPF_JGE_K, 0, 1, X32_SYSCALL_BIT),  # x32's numbers: kill
        (BPF_RET_K, 0, 0, SECCOMP_RET_KILL_PROCESS),
    ]
    code += [(BPF_JEQ_K, "allow", 0, number) for number in allowed]
    # Conditional ones: each checks its argument, then loads the number back.
    conditions = [(numbers[name], 0, pid) for name in TO_ITSELF]  # kill(pid,...): pid
    conditions += [(numbers["ioctl"], 1, TCGETS), (numbers["prlimit64"], 2, 0)]
    for number, argument, value in conditions:
        zero_high = value in (0, pid)  # a pid or a NULL has its high half 0 as well
        block = [
            (BPF_LD_W_ABS, 0, 0, _arg(argument)),
            (BPF_JEQ_K, 0, "refuse", value),
        ]
        if zero_high:
            block += [(BPF_LD_W_ABS, 0, 0, _arg(argument, high=True)),
                      (BPF_JEQ_K, "allow", "refuse", 0)]  # fmt: skip
        else:
            block += [(BPF_JMP_JA, 0, 0, "allow")]
        code += [(BPF_JEQ_K, 0, len(block), number), *block]
    code += [
        (BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | errno.EACCES),  # "refuse"
        (BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW),  # "allow"
    ]
    labels = {"refuse": len(code) - 2, "allow": len(code) - 1}
    resolved = []
    for i, (op, true, false, k) in enumerate(code):
        if op == BPF_JMP_JA:
            k, true, false = labels[k] - i - 1, 0, 0
        true = labels[true] - i - 1 if isinstance(true, str) else true
        false = labels[false] - i - 1 if isinstance(false, str) else false
        if not (0 <= true <= 255 and 0 <= false <= 255):
            raise ConfineError("the system call filter is too long for its jumps")
        resolved.append((op, true, false, k))
    return resolved


def _filter_system_calls(pid: int) -> None:
    machine = ARCHITECTURES.get(platform.machine())
    if machine is None:
        raise ConfineError(f"no system call filter for this machine ({platform.machine()})")
    instructions = program(machine, pid)
    filters = b"".join(struct.pack("=HBBI", *instruction) for instruction in instructions)
    buffer = ctypes.create_string_buffer(filters)

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = SockFprog(len(instructions), ctypes.addressof(buffer))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise ConfineError(f"prctl(PR_SET_SECCOMP): {os.strerror(ctypes.get_errno())}")
