"""Reads a Darshan log in a child process with a time and a memory limit.

libdarshan-util is C: a crafted log (a huge record count, a compressed block that
inflates without end) could make it loop or eat the machine. So the log is read in a
fresh Python (`python -m jobio.sandbox FILE`, no Django, no fork of a worker's
threads) under RLIMIT_AS and RLIMIT_CPU, killed with all it started after
DARSHAN_PARSE_SECONDS, the same way exercises/quota/collectors.py runs its tools.
The child answers one line of JSON: the profile, or why the log cannot be read.
"""

import json
import os
import resource
import signal
import subprocess
import sys
from contextlib import suppress
from pathlib import Path

from django.conf import settings

from jobio.profile import CUT_SHORT, IOProfile, LogUnreadable, read_profile

MiB = 2**20


def parse(path: Path, *, seconds: float, memory_bytes: int, max_bytes: int) -> IOProfile:
    """The profile of the log at `path`, or LogUnreadable with a one-line reason."""
    size = path.stat().st_size
    if size > max_bytes:
        raise LogUnreadable(too_big(size, max_bytes))
    if size == 0:
        raise LogUnreadable("The file is empty: upload the .darshan file of your job.")

    def limits() -> None:  # in the child, before it runs Python
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
        cpu = int(seconds) + 1
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    env = {
        "PATH": "/usr/bin:/bin",
        "LC_ALL": "C.UTF-8",
        # One thread each: numpy's BLAS would reserve memory per core at import.
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
    }
    child = subprocess.Popen(  # noqa: S603 -- our own interpreter and module, a path argument
        [sys.executable, "-I", "-c", CHILD, str(path.resolve())],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=str(Path(__file__).resolve().parent.parent),
        env=env,
        preexec_fn=limits,  # noqa: PLW1509 -- the child is a fresh interpreter, not a fork's threads
        start_new_session=True,
    )
    try:
        stdout, stderr = child.communicate(timeout=seconds)
    except subprocess.TimeoutExpired:
        with suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)
        child.communicate()
        raise LogUnreadable(
            f"Reading this log took longer than {seconds:g} s, so it was stopped: a real "
            "log of one job reads in a second. Is it damaged?"
        ) from None
    return answer(child.returncode, stdout, stderr, memory_bytes)


def parse_with_site_limits(path: Path) -> IOProfile:
    """`parse` within the limits the site set (DARSHAN_*)."""
    return parse(
        path,
        seconds=settings.DARSHAN_PARSE_SECONDS,
        memory_bytes=settings.DARSHAN_PARSE_MEMORY_MB * MiB,
        max_bytes=settings.DARSHAN_MAX_BYTES,
    )


def too_big(size: int, max_bytes: int) -> str:
    return (
        f"The file is {size / MiB:,.1f} MiB, more than the {max_bytes / MiB:,.1f} MiB a log may "
        "have here. A job's Darshan log is usually a few KiB to a few MiB: is this the "
        ".darshan file?"
    )


def answer(returncode: int, stdout: bytes, stderr: bytes, memory_bytes: int) -> IOProfile:
    try:
        reply = json.loads(stdout.decode().strip().splitlines()[-1])
    except (ValueError, IndexError):
        reply = None
    if returncode == 0 and isinstance(reply, dict):
        if "error" in reply:
            raise LogUnreadable(str(reply["error"]))
        if "start" in reply:
            raise LogUnreadable(
                f"The log reader could not start within its {memory_bytes / MiB:,.0f} MiB of "
                "memory (DARSHAN_PARSE_MEMORY_MB): ask the administrators to raise it."
            )
        if "profile" in reply:
            return IOProfile.from_json(reply["profile"])
    if (isinstance(reply, dict) and "memory" in reply) or b"MemoryError" in stderr:
        raise LogUnreadable(
            f"Reading this log needed more than {memory_bytes / MiB:,.0f} MiB of memory, so "
            "it was stopped: a real log of one job needs far less. Is it damaged?"
        )
    if returncode == -signal.SIGXCPU:
        raise LogUnreadable("Reading this log used too much CPU time, so it was stopped.")
    # libdarshan-util aborts on some logs cut short (a double free in its name reader).
    raise LogUnreadable(f"{CUT_SHORT} (The reader stopped with status {returncode}.)")


# The child's program: jobio.profile only (no Django), one line of JSON out.
CHILD = """
import json, sys
from pathlib import Path
sys.path.insert(0, ".")
try:
    from jobio.profile import LogUnreadable, read_profile
    import darshan.backend.cffi_backend
except (ImportError, MemoryError, OSError) as e:
    print(json.dumps({"start": type(e).__name__}))
    sys.exit(0)
try:
    reply = {"profile": read_profile(Path(sys.argv[1])).to_json()}
except LogUnreadable as e:
    reply = {"error": str(e)}
except MemoryError:
    reply = {"memory": True}
print(json.dumps(reply))
"""

__all__ = ["LogUnreadable", "parse", "read_profile"]
