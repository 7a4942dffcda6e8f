"""The warm log reader: a process of the sandbox user that imports the reader's code
once (PyDarshan, which imports pandas and numpy: ~0.4 CPU seconds a fresh Python
paid on every log) and then forks one child per log. It never opens a log itself, and
never runs what a request says before it has forked: every log is still read by a
process of its own, which confines itself (jobio/confine.py) before it opens the log,
exactly as a fresh one did. No Django here.

It is started by storagelab-sandbox as the sandbox user (jobio/warm_client.py: the worker's
side), its stdin a Unix socket to the worker. A request is one message: JSON (the
program, its limits, its time) and, passed with it, the log's memory file, the two
pipes for the child's stdout and stderr and the memory files of a run's other logs.
The server forks, closes its copies of those, waits for the child within its time
(killing it when its time is up) and answers one line of JSON: how the child ended.

What a child could do to it, were a crafted log to take the child over: nothing. The
server is not dumpable (no process of the sandbox user may trace it, read its memory,
its environment or its descriptors under /proc), and a confined child may make no
system call that reaches another process. The server holds no log's bytes, only for a
moment the descriptors of the log it is forking for; a child has only its own.
"""

import contextlib
import ctypes
import json
import os
import select
import signal
import socket
import sys
import threading
import traceback

PR_SET_DUMPABLE = 4
PR_SET_PDEATHSIG = 1
# A request's JSON (a program of a few KiB) and its descriptors: the log, stdout,
# stderr, and a run's logs (a run has at most a few dozen ranks' logs).
REQUEST_MAX_BYTES = 256 * 1024
FDS_MAX = 64
# What the server writes to the worker once it is ready to fork.
READY = b"ready"


def serve() -> None:
    """Imports what a reader needs, then answers requests until the worker goes."""
    try:
        import darshan.backend.cffi_backend  # noqa: F401, PLC0415 -- the cost being saved

        import jobio.darshan  # noqa: F401, PLC0415
    # As a fresh child did: a reader without them says so itself (its program imports them).
    except (ImportError, MemoryError, OSError, SystemError):
        pass
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        sys.exit(f"prctl(PR_SET_DUMPABLE): {os.strerror(ctypes.get_errno())}")
    # A fork copies one thread: a server with more (a library's pool) must not fork.
    if threading.active_count() != 1 or len(os.listdir("/proc/self/task")) != 1:
        sys.exit("the warm reader runs more than one thread after its imports")
    worker = socket.socket(fileno=0)
    worker.sendall(READY)
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(worker, REQUEST_MAX_BYTES, FDS_MAX)
        except OSError:
            return
        if not message:
            return  # the worker went: so does the server
        try:
            request = json.loads(message)
            ended = run_one(request, fds, libc)
        except (ValueError, KeyError, TypeError, OSError) as e:
            ended = {"error": f"{type(e).__name__}: {e}"[:300]}
        finally:
            for fd in fds:
                os.close(fd)
        try:
            worker.sendall(json.dumps(ended).encode())
        except OSError:
            return


def run_one(request: dict, fds: list[int], libc: ctypes.CDLL) -> dict:
    """Forks the child of one request and waits for it within its time."""
    program, seconds = str(request["program"]), float(request["seconds"])
    argv = [str(a) for a in request["argv"]]
    if len(fds) < 3:
        raise ValueError("a request passes the log, stdout and stderr")
    server = os.getpid()
    child = os.fork()
    if child == 0:
        _child(program, argv, fds, server, libc)  # never returns
    with os.fdopen(os.pidfd_open(child), "rb", buffering=0) as pidfd:
        ready, _, _ = select.select([pidfd], [], [], seconds)
        timed_out = not ready
        if timed_out:
            os.kill(child, signal.SIGKILL)
    _, status = os.waitpid(child, 0)
    return {"status": os.waitstatus_to_exitcode(status), "timeout": timed_out}


def _child(program: str, argv: list[str], fds: list[int], server: int, libc: ctypes.CDLL) -> None:
    """The reader of one log: its three standard descriptors the log, stdout and stderr,
    a run's other logs from 3 on, nothing else; then the program, as `python -c`
    would run it (it confines itself before it opens the log)."""
    code = 1
    try:
        # Killed with the server (a fork does not inherit it): the worker kills the
        # server's storagelab-sandbox, the kernel kills the server, then this.
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != server:
            os._exit(137)
        high = [os.dup(fd) for fd in fds]  # above every number the moves below write
        for number, fd in enumerate(high):
            os.dup2(fd, number)
        os.closerange(len(fds), os.sysconf("SC_OPEN_MAX"))
        sys.argv = ["-c", *argv]
        exec(compile(program, "<string>", "exec"), {"__name__": "__main__"})  # noqa: S102 -- jobio/sandbox.py's own programs
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if not isinstance(e.code, int | None):
            print(e.code, file=sys.stderr)
    except BaseException:  # noqa: BLE001 -- as Python itself ends on any: a traceback, status 1
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        os._exit(code)
