"""A child process run within a time, heard up to a bound, and killed with all it
started when its time is up: for the work on what may sit on a hung mount (finding a
job's log, an Open OnDemand quota file, a quota tool, the directory walk), which may
hang or talk without end. Every child the portal runs for one piece of work goes
through `run_bounded`; the Darshan log reader's warm server, which lives as long as
its worker, bounds each log's reader itself (jobio/sandbox.py). No Django here."""

import logging
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

log = logging.getLogger(__name__)

# After SIGKILL, how long a child may take to go: one stuck in the kernel (a read on a
# hung mount) cannot be waited for without end, and is left to it.
KILL_WAIT_SECONDS = 2


def run_bounded(
    argv: list[str],
    *,
    seconds: float,
    output_max: int,
    env: dict[str, str],
    cwd: Path = Path("/"),
    stdin: int | None = None,
    preexec_fn: Callable[[], None] | None = None,
    pass_fds: list[int] | None = None,
) -> tuple[int, bytes, bytes]:
    """Runs `argv` in a session of its own for at most `seconds`. Returns its exit
    status, stdout and stderr, each kept up to `output_max` bytes (the rest is read
    and dropped). Once it is over its time it is killed with its group, and awaited
    KILL_WAIT_SECONDS at most: TimeoutError, whose text says what was left behind
    ("" when nothing). Whatever happens, this returns within seconds + KILL_WAIT_SECONDS.
    OSError (FileNotFoundError: no such program) when it cannot start."""
    child = subprocess.Popen(  # noqa: S603 -- the callers' own programs
        argv,
        stdin=stdin if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=env,
        close_fds=True,
        pass_fds=pass_fds or (),
        start_new_session=True,
        preexec_fn=preexec_fn,  # noqa: PLW1509 -- only setrlimit, then a fresh interpreter
    )
    try:
        stdout, stderr = _collect(child, time.monotonic() + seconds, output_max)
    except TimeoutError:
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(child.pid, signal.SIGKILL)
        try:
            child.wait(timeout=KILL_WAIT_SECONDS)
        except subprocess.TimeoutExpired:
            # In the kernel on a hung mount, where SIGKILL waits: left to it (subprocess
            # reaps it once it ends).
            log.error("%s (pid %d) outlived SIGKILL, stuck on a hung mount?", argv[0], child.pid)
            raise TimeoutError(f"killed, it did not end (pid {child.pid}, stuck on a hung mount?)")
        raise TimeoutError("") from None
    finally:
        child.stdout.close()
        child.stderr.close()
    return child.returncode, stdout, stderr


def _collect(child: subprocess.Popen, deadline: float, output_max: int) -> tuple[bytes, bytes]:
    kept = {child.stdout.fileno(): bytearray(), child.stderr.fileno(): bytearray()}
    with selectors.DefaultSelector() as selector:
        for stream in (child.stdout, child.stderr):
            selector.register(stream, selectors.EVENT_READ)
        while selector.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            for key, _ in selector.select(timeout=left):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    selector.unregister(key.fileobj)
                    continue
                buffer = kept[key.fd]
                buffer += chunk[: max(0, output_max - len(buffer))]
    try:
        child.wait(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        raise TimeoutError from None
    return bytes(kept[child.stdout.fileno()]), bytes(kept[child.stderr.fileno()])
