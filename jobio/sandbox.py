"""Reads a Darshan log in a child process that holds nothing of the portal's.

libdarshan-util is C, with known faults on damaged logs (a double free on one cut
short), and a crafted log could make it loop, eat memory or worse. So each log is read
by a process of its own, forked for it by this worker process's warm reader
(jobio/warm.py: a Python with no Django that has imported PyDarshan once, and forks
from one thread), that:
- runs as DARSHAN_SANDBOX_USER: storagelab-sandbox (DARSHAN_SANDBOX_HELPER,
  docker/sandbox/) started the warm reader as that user. The worker itself is no root
  and holds no capability; that small program alone may switch to the sandbox user
  (file capabilities), stays the warm reader's parent, and takes it down when the
  worker kills it (PR_SET_PDEATHSIG), and the reader of a log with it (its own);
- gets the log on its standard input, in an anonymous memory file (memfd): no path,
  nothing on a disk another user could read;
- has an empty environment (no secret comes in by it) and no file descriptor but its
  three standard ones (and, for a lab run's logs, one memory file per log);
- gives up the network, programs, other processes, every file it was not handed
  (Landlock) and all but a little memory, CPU time and files (jobio/confine.py)
  before it opens the log;
- answers one line of JSON on stdout: the I/O it read, or why the log cannot be read. The
  answer is read up to a bound and checked like any input (JobIO.from_json).
The warm reader kills it after DARSHAN_PARSE_SECONDS; should the reader not say so a
few seconds later, the worker kills both. A warm reader whose child was killed (a
signal, its time) forks no other: the next log gets a new one (jobio/warm_client.py).
What the user reads is the portal's words, never an exit status. Where the sandbox
cannot be made (no sandbox user, no storagelab-sandbox, one built for another user, a
kernel without Landlock), no log is read and the check says so.
"""

import json
import os
import signal
from pathlib import Path

from django.conf import settings

from exercises.advisor.job_io import JobIO
from jobio.darshan import CUT_SHORT, LogUnreadable
from jobio.warm_client import NOT_SET_UP, SandboxUnavailable, request
from portal import accounts
from portal.units import MiB


def parse(path: Path, *, seconds: float, memory_bytes: int, max_bytes: int) -> JobIO:
    """The I/O of the log at `path` (a file the caller may read, e.g. the command's
    argument), or LogUnreadable with a one-line reason."""
    size = path.stat().st_size
    if size > max_bytes:
        raise LogUnreadable(too_big(size, max_bytes))
    with path.open("rb") as f:
        data = f.read(max_bytes + 1)
    return parse_bytes(data, seconds=seconds, memory_bytes=memory_bytes, max_bytes=max_bytes)


def parse_bytes(data: bytes, *, seconds: float, memory_bytes: int, max_bytes: int) -> JobIO:
    """The I/O of the log `data`, or LogUnreadable with a one-line reason."""
    if len(data) > max_bytes:
        raise LogUnreadable(too_big(len(data), max_bytes))
    if not data:
        raise LogUnreadable("The file is empty: upload the .darshan file of your job.")
    code, stdout, stderr = run_confined(CHILD, data, seconds=seconds, memory_bytes=memory_bytes)
    return answer(code, stdout, stderr, memory_bytes)


def parse_run_logs(data: bytes, sizes: list[int], *, seconds: float, memory_bytes: int) -> JobIO:
    """The I/O of a lab run's logs: `data` holds them one after the other, `sizes`
    (checked when they arrived: jobio/runs.py) says where each ends. Each is handed to
    the child in a memory file of its own; the child is told their descriptors."""
    if not sizes or sum(sizes) != len(data):
        raise LogUnreadable("The run's Darshan logs did not arrive whole.")
    files = []
    try:
        start = 0
        for size in sizes:
            fd = os.memfd_create("darshan-log")
            files.append(fd)
            os.write(fd, data[start : start + size])
            start += size
        code, stdout, stderr = run_confined(
            RUN_LOGS_CHILD, b"", seconds=seconds, memory_bytes=memory_bytes, pass_fds=files
        )
    finally:
        for fd in files:
            os.close(fd)
    return answer(code, stdout, stderr, memory_bytes)


def parse_with_site_limits(path: Path) -> JobIO:
    """`parse` within the limits the site set (DARSHAN_*)."""
    return parse(path, **site_limits())


def parse_bytes_with_site_limits(data: bytes) -> JobIO:
    return parse_bytes(data, **site_limits())


def site_limits() -> dict[str, float | int]:
    return {
        "seconds": settings.DARSHAN_PARSE_SECONDS,
        "memory_bytes": settings.DARSHAN_PARSE_MEMORY_MB * MiB,
        "max_bytes": settings.DARSHAN_MAX_BYTES,
    }


def sandbox_ids() -> tuple[int, int]:
    """DARSHAN_SANDBOX_USER's UID and GID (portal/accounts.py), or SandboxUnavailable."""
    try:
        return accounts.sandbox_ids()
    except accounts.SandboxUnknown as e:
        raise SandboxUnavailable(NOT_SET_UP.format(reason=str(e))) from None


def run_confined(
    program: str,
    data: bytes,
    *,
    seconds: float,
    memory_bytes: int,
    pass_fds: list[int] | None = None,
) -> tuple[int, bytes, bytes]:
    """Runs `program` (Python source that calls `confine(**LIMITS)` once it has
    imported what it needs, then reads `data` from /proc/self/fd/0, and the memory
    files `pass_fds` from /proc/self/fd/3 on, as sys.argv[2] lists them) as the
    sandbox user, for at most `seconds`, in a child of this process's warm reader.
    Returns its exit status, stdout and stderr (each up to ANSWER_MAX_BYTES,
    jobio/warm_client.py); a child
    over its time is killed, and LogUnreadable says so."""
    uid, gid = sandbox_ids()
    limits = {"uid": uid, "gid": gid, "memory_bytes": memory_bytes, "cpu_seconds": int(seconds) + 1}
    extras = list(pass_fds or [])
    argv = [json.dumps(limits), json.dumps(list(range(3, 3 + len(extras))))]
    log = os.memfd_create("darshan-log")
    try:
        os.write(log, data)  # memfd writes are whole: it is memory
        os.lseek(log, 0, os.SEEK_SET)
        return request(PROLOGUE + program, argv, [log, *extras], seconds, memory_bytes)
    except TimeoutError:
        raise LogUnreadable(
            f"Reading this log took longer than {seconds:g} s, so it was stopped: a real "
            "log of one job reads in a second. Is it damaged?"
        ) from None
    finally:
        os.close(log)


def too_big(size: int, max_bytes: int) -> str:
    return (
        f"The file is {size / MiB:,.1f} MiB, more than the {max_bytes / MiB:,.1f} MiB a log may "
        "have here. A job's Darshan log is usually a few KiB to a few MiB: is this the "
        ".darshan file?"
    )


def answer(returncode: int, stdout: bytes, stderr: bytes, memory_bytes: int) -> JobIO:
    try:
        reply = json.loads(stdout.decode().strip().splitlines()[-1])
    except (ValueError, IndexError, RecursionError):
        reply = None
    if returncode == 0 and isinstance(reply, dict):
        if "sandbox" in reply:
            raise SandboxUnavailable(NOT_SET_UP.format(reason=str(reply["sandbox"])[:200]))
        if "error" in reply:
            raise LogUnreadable(str(reply["error"])[:500])
        if "start" in reply:
            raise LogUnreadable(
                f"The log reader could not start within its {memory_bytes / MiB:,.0f} MiB of "
                "memory (DARSHAN_PARSE_MEMORY_MB): ask the administrators to raise it."
            )
        if "io" in reply:
            try:
                return JobIO.from_json(reply["io"])
            except (TypeError, ValueError, KeyError) as e:
                raise LogUnreadable(f"{DAMAGED} ({str(e)[:120]})") from None
    if (isinstance(reply, dict) and "memory" in reply) or b"MemoryError" in stderr:
        raise LogUnreadable(
            f"Reading this log needed more than {memory_bytes / MiB:,.0f} MiB of memory, so "
            "it was stopped: a real log of one job needs far less. Is it damaged?"
        )
    if returncode == -signal.SIGXCPU:
        raise LogUnreadable("Reading this log used too much CPU time, so it was stopped.")
    # libdarshan-util aborts or faults on some logs cut short (a double free in its name
    # reader). Its exit status is the administrators' (logged in _read), not the user's.
    raise LogUnreadable(CUT_SHORT)


DAMAGED = "This Darshan log holds figures no job can have: it is damaged"

# Every child starts so: the project's modules importable, then the program's own
# imports, then confine() with the limits the parent passed.
PROLOGUE = """
import json, sys
sys.path.insert(0, ".")
from jobio.confine import ConfineError, confine
LIMITS = json.loads(sys.argv[1])
"""

# The reader: the I/O of the log on stdin, as one line of JSON.
CHILD = """
from pathlib import Path
READ = lambda: read_job_io(Path("/proc/self/fd/0"))
try:
    from jobio.darshan import LogUnreadable, read_job_io, read_run_logs
    import darshan.backend.cffi_backend
# Out of memory in the import machinery itself, Python raises a bare SystemError.
except (ImportError, MemoryError, OSError, SystemError) as e:
    print(json.dumps({"start": type(e).__name__}))
    sys.exit(0)
try:
    confine(**LIMITS)
except (ConfineError, OSError) as e:
    print(json.dumps({"sandbox": str(e)}))
    sys.exit(0)
try:
    reply = {"io": READ().to_json()}
except LogUnreadable as e:
    reply = {"error": str(e)}
except MemoryError:
    reply = {"memory": True}
print(json.dumps(reply))
"""

# A lab run's logs: each in a memory file whose number the parent passes.
RUN_LOGS_CHILD = CHILD.replace(
    'READ = lambda: read_job_io(Path("/proc/self/fd/0"))',
    'READ = lambda: read_run_logs([Path(f"/proc/self/fd/{fd}") for fd in json.loads(sys.argv[2])])',
)

__all__ = ["LogUnreadable", "SandboxUnavailable", "parse", "parse_bytes"]
