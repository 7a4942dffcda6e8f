"""A child process run within a time, heard up to a bound, and killed with all it
started when its time is up: for the work on what users send (a Darshan log's reader)
and on files that may sit on a hung mount (finding a job's log, an Open OnDemand quota
file), which may hang or talk without end. No Django here."""

import os
import selectors
import signal
import subprocess
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

# After SIGKILL, how long a child may take to go: one stuck in the kernel (a read on a
# hung mount) cannot be waited for without end, and is left to it.
KILL_WAIT_SECONDS = 5


def run_child(
    argv: list[str],
    *,
    seconds: float,
    output_max: int,
    cwd: Path,
    env: dict[str, str],
    stdin: int | None = None,
    preexec_fn: Callable[[], None] | None = None,
) -> tuple[int, bytes, bytes]:
    """Runs `argv` in a session of its own for at most `seconds`. Returns its exit
    status, stdout and stderr, each kept up to `output_max` bytes (the rest is read
    and dropped). TimeoutError once it is over its time, killed with its group."""
    child = subprocess.Popen(  # noqa: S603 -- the callers' own programs
        argv,
        stdin=stdin if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=env,
        close_fds=True,
        start_new_session=True,
        preexec_fn=preexec_fn,  # noqa: PLW1509 -- only setrlimit, then a fresh interpreter
    )
    try:
        stdout, stderr = _collect(child, time.monotonic() + seconds, output_max)
    except TimeoutError:
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(child.pid, signal.SIGKILL)
        with suppress(subprocess.TimeoutExpired):
            child.wait(timeout=KILL_WAIT_SECONDS)
        raise
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
