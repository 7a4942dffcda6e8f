"""The worker's side of its warm reader (jobio/warm.py is the reader's side): starting
it through storagelab-sandbox, one request (a child, a log), and its end. One per
worker process, started at its first log and whenever the one before ended.

Every child of one warm reader has its address layout and its stack canary: a crafted
log that makes children crash or not, one guess at a time, would learn them (a fork
server's crash oracle). So a reader whose child did not end well (killed by a signal,
by its time, or ended in error) forks no other: the next log is read by a new one, a
new exec, with a layout and a canary of its own. Starting one takes 0.4 s and 0.5 CPU
s here, twenty times a fork of a warm one (23 ms): paid by bad logs alone. A fresh
reader for every log would pay it on each: a class of 200 at its 30 checks an hour
would keep most of a core busy. What a good log could still learn of a layout serves
a reader that Landlock and seccomp keep from every file and process (jobio/confine.py).
"""

import json
import logging
import os
import resource
import selectors
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from django.conf import settings

from jobio.darshan import LogUnreadable
from jobio.warm import READY
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


def request(
    program: str, argv: list[str], fds: list[int], seconds: float, memory_bytes: int
) -> tuple[int, bytes, bytes]:
    """One request to this process's warm reader: its child's exit status, stdout and
    stderr, or TimeoutError. A reader found gone before it took the request is started
    again, once; a reader whose child did not end well is stopped (see the module's
    docstring)."""
    with _READING:
        return _request(program, argv, fds, seconds, memory_bytes)


def _request(
    program: str, argv: list[str], fds: list[int], seconds: float, memory_bytes: int
) -> tuple[int, bytes, bytes]:
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
# One request at a time per process (a Celery thread pool's, a test's threads).
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
