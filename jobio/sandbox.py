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
- gives up the network, programs, other processes and all but a little memory, CPU
  time and files (jobio/confine.py) before it opens the log;
- answers one line of JSON on stdout: the I/O it read, or why the log cannot be read. The
  answer is read up to a bound and checked like any input (JobIO.from_json).
The warm reader kills it after DARSHAN_PARSE_SECONDS; should the reader not say so a
few seconds later, the worker kills both. Where the sandbox cannot be made (no sandbox
user, no storagelab-sandbox, one built for another user), no log is read and the check
says so.
"""

import json
import logging
import os
import resource
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from django.conf import settings

from exercises.advisor.job_io import JobIO
from jobio.darshan import CUT_SHORT, LogUnreadable
from jobio.warm import READY
from portal import accounts
from portal.children import KILL_WAIT_SECONDS
from portal.units import MiB

log = logging.getLogger(__name__)

# storagelab-sandbox's status when it could not start the reader (its words on stderr).
HELPER_REFUSED = 126
# The most the child may say: a JobIO is a few KiB.
ANSWER_MAX_BYTES = 1 * MiB
PROJECT_DIR = Path(__file__).resolve().parent.parent
# The warm reader (jobio/warm.py), started as the sandbox user: its imports take a
# fraction of a second on a quiet host, and seconds on a busy one.
SERVER = 'import sys\nsys.path.insert(0, ".")\nfrom jobio.warm import serve\nserve()\n'
START_SECONDS = 30
# How long past a child's time the server may take to say it killed it.
REPLY_GRACE_SECONDS = KILL_WAIT_SECONDS + 3
ENV = {
    "PATH": "/usr/bin:/bin",
    "LC_ALL": "C.UTF-8",
    # One thread each: numpy's BLAS would reserve memory per core at import.
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
}
NOT_SET_UP = (
    "The portal is not set up to read Darshan logs safely ({reason}), so this log was "
    "not read: ask the administrators (DARSHAN_SANDBOX_USER, README: Check my job)."
)


class SandboxUnavailable(LogUnreadable):
    """The sandbox cannot be made here: a matter for the administrators."""


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
    Returns its exit status, stdout and stderr (each up to ANSWER_MAX_BYTES); a child
    over its time is killed, and LogUnreadable says so."""
    uid, gid = sandbox_ids()
    limits = {"uid": uid, "gid": gid, "memory_bytes": memory_bytes, "cpu_seconds": int(seconds) + 1}
    extras = list(pass_fds or [])
    argv = [json.dumps(limits), json.dumps(list(range(3, 3 + len(extras))))]
    log = os.memfd_create("darshan-log")
    try:
        os.write(log, data)  # memfd writes are whole: it is memory
        os.lseek(log, 0, os.SEEK_SET)
        with _READING:
            return _read(PROLOGUE + program, argv, [log, *extras], seconds, memory_bytes)
    except TimeoutError:
        raise LogUnreadable(
            f"Reading this log took longer than {seconds:g} s, so it was stopped: a real "
            "log of one job reads in a second. Is it damaged?"
        ) from None
    finally:
        os.close(log)


def _read(
    program: str, argv: list[str], fds: list[int], seconds: float, memory_bytes: int
) -> tuple[int, bytes, bytes]:
    """One request to the warm reader; a reader found gone before it took the request
    is started again, once.

    Every child of one warm reader has its address layout and its stack canary: a
    crafted log that makes children crash or not, one guess at a time, would learn them
    (a fork server's crash oracle). So a reader whose child did not end well (killed by
    a signal, by its time, or ended in error) forks no other: the next log is read by
    a new one (a new exec: a new layout and canary). Starting one takes 0.4 s and 0.5
    CPU s, 20 times a warm fork (23 ms; README, Check my job): paid by bad logs only."""
    for attempt in (1, 2):
        reader = _warm_reader(memory_bytes)
        try:
            code, stdout, stderr = reader.read(program, argv, fds, seconds)
        except ReaderGone:
            reader.stop()
            if attempt == 2:
                raise SandboxUnavailable(
                    NOT_SET_UP.format(reason="the warm reader ends as soon as it starts")
                ) from None
            continue
        except TimeoutError:
            reader.stop()  # its child was killed for its time: a signal too
            raise
        if code != 0:
            # For the administrators; the user reads what it means (answer()).
            log.warning("a Darshan log's reader ended with status %d: its warm reader goes", code)
            reader.stop()
        return code, stdout, stderr
    raise AssertionError("unreachable")


class ReaderGone(Exception):
    """The warm reader was not there to take a request (it is started again)."""


class WarmReader:
    """This process's warm reader (jobio/warm.py): storagelab-sandbox starts it as the
    sandbox user, with the memory limit every child of it keeps; it answers on a Unix
    socket, this process's alone. It ends with this process: the socket closes."""

    def __init__(self, helper: str, memory_bytes: int) -> None:
        self.key = (os.getpid(), helper, memory_bytes)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self.process = subprocess.Popen(  # noqa: S603 -- the site's helper, our own program
                [helper, sys.executable, "-I", "-c", SERVER],
                stdin=theirs,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                cwd=PROJECT_DIR,
                env=ENV,
                close_fds=True,
                start_new_session=True,
                # Its memory is bounded from the start, its imports too (each child's
                # confine() sets the same limit again, with the rest).
                preexec_fn=lambda: _limit_memory(memory_bytes),  # noqa: PLW1509 -- setrlimit only
            )
        except OSError as e:
            ours.close()
            reason = f"{helper} cannot be run: {e.strerror}"
            raise SandboxUnavailable(NOT_SET_UP.format(reason=reason)) from None
        finally:
            theirs.close()
        self.socket = ours
        ours.settimeout(START_SECONDS)
        try:
            hello = ours.recv(64)
        except OSError:  # TimeoutError among them
            hello = b""
        if hello != READY:
            said = self.stop()
            refused = self.process.returncode == HELPER_REFUSED
            if refused and said.startswith(b"storagelab-sandbox:"):
                reason = said.decode(errors="replace").strip().splitlines()[0][:300]
            else:
                last = said.decode(errors="replace").strip().splitlines()[-1:] or ["no word"]
                reason = f"the warm reader did not start: {last[0][:300]}"
            raise SandboxUnavailable(NOT_SET_UP.format(reason=reason))
        self.process.stderr.close()  # it says nothing more: each child has its own

    def read(
        self, program: str, argv: list[str], fds: list[int], seconds: float
    ) -> tuple[int, bytes, bytes]:
        out, out_end = os.pipe()
        err, err_end = os.pipe()
        try:
            request = json.dumps({"program": program, "argv": argv, "seconds": seconds})
            try:
                passed = [fds[0], out_end, err_end, *fds[1:]]  # the child's 0, 1, 2, 3...
                socket.send_fds(self.socket, [request.encode()], passed)
            except OSError:
                raise ReaderGone from None
        finally:
            os.close(out_end)
            os.close(err_end)
        try:
            return self._answer(out, err, time.monotonic() + seconds + REPLY_GRACE_SECONDS)
        finally:
            os.close(out)
            os.close(err)

    def _answer(self, out: int, err: int, deadline: float) -> tuple[int, bytes, bytes]:
        """The child's stdout and stderr up to their end (each kept up to
        ANSWER_MAX_BYTES), and the server's word of how the child ended."""
        kept = {out: bytearray(), err: bytearray()}
        ended = None
        with selectors.DefaultSelector() as selector:
            selector.register(out, selectors.EVENT_READ)
            selector.register(err, selectors.EVENT_READ)
            selector.register(self.socket, selectors.EVENT_READ)
            while selector.get_map():
                left = deadline - time.monotonic()
                if left <= 0:
                    self.stop()  # the server did not end the child in its time: both go
                    raise TimeoutError
                for key, _ in selector.select(timeout=left):
                    if key.fileobj is self.socket:
                        selector.unregister(self.socket)
                        ended = self._ended()
                        continue
                    chunk = os.read(key.fd, 65536)
                    if not chunk:
                        selector.unregister(key.fd)
                        continue
                    kept[key.fd] += chunk[: max(0, ANSWER_MAX_BYTES - len(kept[key.fd]))]
        if ended.get("timeout"):
            raise TimeoutError
        return int(ended["status"]), bytes(kept[out]), bytes(kept[err])

    def _ended(self) -> dict:
        try:
            reply = json.loads(self.socket.recv(4096) or b"null")
        except (OSError, ValueError):
            reply = None
        if not isinstance(reply, dict) or not isinstance(reply.get("status"), int):
            said = reply.get("error") if isinstance(reply, dict) else "no answer"
            self.stop()
            raise LogUnreadable(
                f"The log reader stopped before it answered ({str(said)[:200]}): send the "
                "log again, and tell the administrators if it happens again."
            )
        return reply

    def stop(self) -> bytes:
        """Kills the server's storagelab-sandbox (its own user's process: the kernel
        then kills the server and its child). Returns what it said on stderr."""
        self.socket.close()
        self.process.kill()
        try:
            _, said = self.process.communicate(timeout=KILL_WAIT_SECONDS)
        except (subprocess.TimeoutExpired, ValueError):  # ValueError: stderr closed
            said = b""
        global _reader  # noqa: PLW0603 -- this process's one reader
        if _reader is self:
            _reader = None
        return said or b""


_reader: WarmReader | None = None
_READING = threading.Lock()


def _warm_reader(memory_bytes: int) -> WarmReader:
    """This process's warm reader for this memory limit, started when there is none
    (or the one there is was started by the process this one was forked from)."""
    global _reader  # noqa: PLW0603 -- this process's one reader
    helper = settings.DARSHAN_SANDBOX_HELPER
    if _reader is not None and _reader.key[0] != os.getpid():
        _reader.socket.close()  # the parent's, copied by a fork: not ours to use or stop
        _reader = None
    if _reader is not None and (
        _reader.key != (os.getpid(), helper, memory_bytes) or _reader.process.poll() is not None
    ):
        _reader.stop()
    if _reader is None:
        _reader = WarmReader(helper, memory_bytes)
    return _reader


def _limit_memory(memory_bytes: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


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
