"""Checks of a user's job: started from an upload or from the site's Darshan log
directory, read by the task, seen by their owner (and staff) only.

A log that cannot be read leaves nothing behind: its check is deleted and only the
reason is kept, in the cache for an hour, for its owner's page to show.
"""

import logging
import pwd
import re
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.cache import cache
from django.db import transaction
from django.http import Http404
from django.utils import timezone

from jobio.models import CheckSource, JobCheck
from jobio.sandbox import too_big

log = logging.getLogger(__name__)

FAILURE_SECONDS = 3600


class CheckRefused(Exception):
    """Why a check cannot start; nothing was stored."""


@dataclass(frozen=True)
class Failure:
    check_id: str
    label: str
    reason: str


# --- starting a check -----------------------------------------------------------


def from_upload(user: AbstractBaseUser, data: bytes, name: str) -> JobCheck:
    if len(data) > settings.DARSHAN_MAX_BYTES:
        raise CheckRefused(too_big(len(data), settings.DARSHAN_MAX_BYTES))
    return _start(user, CheckSource.UPLOAD, f"Upload: {_printable(name)}", data, None)


def from_log_dir(user: AbstractBaseUser, job_id: int) -> JobCheck:
    """The log of Slurm job `job_id` in DARSHAN_LOG_DIR, if the user's cluster account
    ran it: its UID is checked once the log is read (the file name is not proof)."""
    uid = own_uid(user)
    path = find_log(job_id)
    size = path.stat().st_size
    if size > settings.DARSHAN_MAX_BYTES:
        raise CheckRefused(too_big(size, settings.DARSHAN_MAX_BYTES))
    with path.open("rb") as f:
        data = f.read(settings.DARSHAN_MAX_BYTES + 1)
    return _start(user, CheckSource.LOG_DIR, f"Slurm job {job_id}", data, uid)


def own_uid(user: AbstractBaseUser) -> int:
    account = getattr(user, "cluster_account", None)
    if account is None:
        raise CheckRefused(
            "Your login has no cluster account linked, so the portal cannot tell which jobs "
            "are yours: upload the job's .darshan file instead, or ask the administrators "
            "to link your account."
        )
    try:
        return pwd.getpwnam(account.username).pw_uid
    except KeyError:
        raise CheckRefused(
            f"Your cluster account {account.username} is not known on this host (getent "
            "passwd): ask the administrators."
        ) from None


def find_log(job_id: int) -> Path:
    """The log darshan-runtime wrote for `job_id` in the last DARSHAN_LOG_DAYS days
    (LOG_DIR/YEAR/MONTH/DAY/<user>_<exe>_id<job>[-_]…darshan). The job id is an int:
    nothing from the user reaches the glob but digits."""
    root = Path(settings.DARSHAN_LOG_DIR)
    today = timezone.localdate()
    for back in range(max(settings.DARSHAN_LOG_DAYS, 1)):
        day = today - timedelta(days=back)
        folder = root / str(day.year) / str(day.month) / str(day.day)
        for pattern in (f"*_id{int(job_id)}-*.darshan", f"*_id{int(job_id)}_*.darshan"):
            found = sorted(folder.glob(pattern))
            if found:
                return found[0]
    raise CheckRefused(
        f"No Darshan log of job {job_id} from the last {settings.DARSHAN_LOG_DAYS} days: "
        "check the job id (sacct lists your jobs), or upload its .darshan file. Jobs that "
        "did no file I/O, or ran without Darshan, leave no log."
    )


def _printable(name: str) -> str:
    """The uploaded file's name, only to tell checks apart: letters, digits and a few
    signs, at most 80 characters. Never a path."""
    base = re.split(r"[\\/]", name or "")[-1]
    return re.sub(r"[^A-Za-z0-9._+-]", "_", base)[:80] or "log"


def _start(
    user: AbstractBaseUser, source: str, label: str, data: bytes, uid: int | None
) -> JobCheck:
    from jobio.tasks import read_check  # noqa: PLC0415 -- the task module imports this one

    with transaction.atomic():
        check = JobCheck.objects.create(
            user=user, source=source, label=label, log=data, expected_uid=uid
        )
        transaction.on_commit(lambda: _enqueue(read_check, check))
    return check


def _enqueue(task, check: JobCheck) -> None:
    try:
        task.delay(str(check.pk))
    except Exception:
        log.exception("check %s: the task queue did not take it", check.pk)
        fail(
            check,
            "The portal's task queue is not answering, so the log was not read: try "
            "again in a minute.",
        )


# --- ending a check -------------------------------------------------------------


def fail(check: JobCheck, reason: str) -> None:
    """Nothing stays of a log that cannot be read, but the reason, for its owner."""
    cache.set(
        _failure_key(check.pk),
        {"user": check.user_id, "label": check.label, "reason": reason},
        FAILURE_SECONDS,
    )
    JobCheck.objects.filter(pk=check.pk).delete()


def _failure_key(check_id: object) -> str:
    return f"jobio:failed:{check_id}"


# --- who may see what -------------------------------------------------------------


def visible_check(user: AbstractBaseUser, check_id: object) -> JobCheck | Failure:
    """The check (or what is left of a failed one) if `user` owns it or is staff;
    404 otherwise, the same whether it exists or not."""
    check = JobCheck.objects.filter(pk=check_id).first()
    if check is not None:
        if check.user_id == user.pk or user.is_staff:
            return check
        raise Http404("No such check of yours.")
    failed = cache.get(_failure_key(check_id))
    if failed and (failed["user"] == user.pk or user.is_staff):
        return Failure(str(check_id), failed["label"], failed["reason"])
    raise Http404("No such check of yours.")


def recent_checks(user: AbstractBaseUser, limit: int = 10) -> list[JobCheck]:
    return list(JobCheck.objects.filter(user=user).defer("log")[:limit])
