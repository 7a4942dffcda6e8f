"""Finding a job's log in the site's Darshan log directory (DARSHAN_LOG_DIR), in the
worker, in a child process given DARSHAN_LOOKUP_SECONDS: a read on a hung mount costs
one timeout, never a web request or a worker.

darshan-runtime writes YEAR/MONTH/DAY/<user>_<exe>_id<job>[-_]<...>.darshan, each log
owned by the user whose job wrote it, in day folders every user may write to. So a
name proves nothing: another user can plant a file of that name. The lookup takes only
a regular file owned by the user's UID, never follows a link (the day folder and the
file are opened with O_NOFOLLOW, the file checked again once open), opens with
O_NONBLOCK (a FIFO planted there does not hold it), and when it finds nothing of the
user's it says so without naming whose the other files are.

The child runs `main(ROOT JOB UID DAYS MAX_BYTES TODAY)` and writes the log on stdout,
or a reason on stderr with exit status 3. No Django here."""

import fnmatch
import os
import stat
import sys
from datetime import date, timedelta
from pathlib import Path

from portal.children import run_bounded
from portal.units import MiB

REFUSED = 3
PROJECT_DIR = Path(__file__).resolve().parent.parent
CHILD = (
    "import sys; sys.path.insert(0, '.'); from jobio.logdir import main; "
    "sys.exit(main(sys.argv[1:]))"
)


class LookupRefused(Exception):
    """Why no log was taken, in one sentence for the user."""


def fetch(
    root: str, job_id: int, uid: int, *, days: int, max_bytes: int, seconds: float, today: date
) -> bytes:
    """The log of `job_id` written by `uid`, or LookupRefused."""
    argv = [sys.executable, "-I", "-c", CHILD, root, str(int(job_id)), str(int(uid))]
    argv += [str(int(days)), str(int(max_bytes)), today.isoformat()]
    try:
        code, out, err = run_bounded(
            argv,
            seconds=seconds,
            output_max=max_bytes + 1,
            cwd=PROJECT_DIR,
            env={"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"},
        )
    except TimeoutError:
        raise LookupRefused(
            f"Looking for the log of job {job_id} took longer than {seconds:g} s (the log "
            "directory's filesystem may hang): try again later, or upload the log."
        ) from None
    if code == REFUSED:
        raise LookupRefused(err.decode("utf-8", "replace").strip()[:500])
    if code != 0:
        raise LookupRefused(f"The log of job {job_id} could not be looked for (status {code}).")
    return out


def find_own_log(
    root: Path, job_id: int, uid: int, *, days: int, max_bytes: int, today: date
) -> bytes:
    """The bytes of the log of `job_id` that `uid` owns (see the module's docstring)."""
    patterns = (f"*_id{job_id}-*.darshan", f"*_id{job_id}_*.darshan")
    someone_elses = False
    for back in range(max(days, 1)):
        day = today - timedelta(days=back)
        folder = root / str(day.year) / str(day.month) / str(day.day)
        try:
            folder_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError:
            continue  # no such day (or not a folder): nothing written then
        try:
            names = sorted(
                entry.name
                for entry in os.scandir(folder_fd)
                if any(fnmatch.fnmatchcase(entry.name, p) for p in patterns)
            )
            for name in names:
                data = _read_if_own(folder_fd, name, uid, max_bytes, job_id)
                if data is None:
                    someone_elses = True
                    continue
                return data
        finally:
            os.close(folder_fd)
    if someone_elses:
        raise LookupRefused(
            f"No Darshan log of job {job_id} written by your cluster account in the last "
            f"{days} days: you may check your own jobs only (sacct lists them)."
        )
    raise LookupRefused(
        f"No Darshan log of job {job_id} from the last {days} days: check the job id (sacct "
        "lists your jobs), or upload its .darshan file. Jobs that did no file I/O, or ran "
        "without Darshan, leave no log."
    )


def _read_if_own(folder_fd: int, name: str, uid: int, max_bytes: int, job_id: int) -> bytes | None:
    """The file's bytes if it is a regular file `uid` owns, else None."""
    before = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
    if not stat.S_ISREG(before.st_mode) or before.st_uid != uid:
        return None
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder_fd)
    except OSError:
        return None  # swapped for a link or removed since
    try:
        info = os.fstat(fd)
        if (info.st_dev, info.st_ino) != (before.st_dev, before.st_ino) or info.st_uid != uid:
            return None
        if info.st_size > max_bytes:
            raise LookupRefused(
                f"The Darshan log of job {job_id} is {info.st_size / MiB:,.1f} MiB, more than "
                f"the {max_bytes / MiB:,.1f} MiB a log may have here."
            )
        chunks, left = [], max_bytes + 1
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def main(argv: list[str]) -> int:
    root, job_id, uid, days, max_bytes, today = argv
    try:
        data = find_own_log(
            Path(root),
            int(job_id),
            int(uid),
            days=int(days),
            max_bytes=int(max_bytes),
            today=date.fromisoformat(today),
        )
    except LookupRefused as e:
        sys.stderr.write(f"{e}\n")
        return REFUSED
    sys.stdout.buffer.write(data)
    return 0
