"""Checks of a user's job: started from an upload or from the site's Darshan log
directory, read by the task on a queue of its own (jobio/tasks.py), seen by their
owner (and staff) only.

What one user may have at once (checked in one transaction holding their user row):
DARSHAN_CHECKS_GOING logs not read yet, DARSHAN_USER_MAX_BYTES of logs waiting,
DARSHAN_CHECKS_PER_HOUR checks started in an hour. Their lab runs' own logs count with
their checks (`held`): a run's logs in line make a check wait, and the other way round
(jobio/runs.py). A log that cannot be read leaves nothing behind: its check is deleted
and only the reason is kept, in the cache for an hour, for its owner's page to show.
"""

import logging
import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.cache import cache
from django.core.files import File
from django.db import transaction
from django.db.models import Count, Q, QuerySet, Sum
from django.db.models.functions import Length
from django.utils import timezone

from jobio.models import CheckSource, JobCheck, RunLog
from jobio.sandbox import too_big
from portal.accounts import uid_of
from portal.errors import NotFound
from portal.units import MiB

log = logging.getLogger(__name__)

FAILURE_SECONDS = 3600
# Beyond the reader's and the lookup's own limits: a task that ran longer was lost.
TIME_MARGIN_SECONDS = 30
# A check not begun this long after it was started lost its task in the queue.
QUEUE_WAIT_SECONDS = 3600
# A run's logs handed to the reader, whose read has not begun this long after, lost
# their task (their run page says so, and they are no longer counted in line).
RUN_LOGS_QUEUE_WAIT_SECONDS = 600


class CheckRefused(Exception):
    """Why a check cannot start; nothing was stored."""


@dataclass(frozen=True)
class Failure:
    check_id: str
    label: str
    reason: str


def task_seconds() -> int:
    """The most one read may take: its lookup, its reader, and a margin."""
    return settings.DARSHAN_LOOKUP_SECONDS + settings.DARSHAN_PARSE_SECONDS + TIME_MARGIN_SECONDS


# --- starting a check -----------------------------------------------------------


def from_upload(user: AbstractBaseUser, upload: File) -> JobCheck:
    """A check of an uploaded log. Django has it in a temporary file by now (an upload
    larger than FILE_UPLOAD_MAX_MEMORY_SIZE, 2.5 MiB, is written to one as it comes, in
    FILE_UPLOAD_TEMP_DIR, else /tmp): its size is held against the user's limits before
    a byte of it is read into the portal's memory."""
    if upload.size > settings.DARSHAN_MAX_BYTES:
        raise CheckRefused(too_big(upload.size, settings.DARSHAN_MAX_BYTES))
    label = f"Upload: {_printable(upload.name)}"
    return _start(user, source=CheckSource.UPLOAD, label=label, upload=upload)


def from_log_dir(user: AbstractBaseUser, job_id: int) -> JobCheck:
    """A check of Slurm job `job_id`, whose log the task looks for in DARSHAN_LOG_DIR
    (jobio/logdir.py): only one owned by the user's cluster account, and the UID in
    the log must be that account's too (a file's name proves nothing)."""
    uid = own_uid(user)
    return _start(
        user,
        source=CheckSource.LOG_DIR,
        label=f"Slurm job {int(job_id)}",
        job_id=int(job_id),
        expected_uid=uid,
    )


def own_uid(user: AbstractBaseUser) -> int:
    account = getattr(user, "cluster_account", None)
    if account is None:
        raise CheckRefused(
            "Your login has no cluster account linked, so the portal cannot tell which jobs "
            "are yours: upload the job's .darshan file instead, or ask the administrators "
            "to link your account."
        )
    uid = uid_of(account.username)
    if uid is None:
        raise CheckRefused(
            f"Your cluster account {account.username} is not known on this host (getent "
            "passwd): ask the administrators."
        )
    return uid


def _printable(name: str) -> str:
    """The uploaded file's name, only to tell checks apart: letters, digits and a few
    signs, at most 80 characters. Never a path."""
    base = re.split(r"[\\/]", name or "")[-1]
    return re.sub(r"[^A-Za-z0-9._+-]", "_", base)[:80] or "log"


def _start(user: AbstractBaseUser, upload: File | None = None, **fields: object) -> JobCheck:
    """Saves the check within the user's limits (CheckRefused beyond them), with the
    `upload` read only once they passed. The caller has it read once committed
    (jobio/tasks.py: read_once_committed)."""
    with transaction.atomic():
        hold(user.pk)
        line = held(user.pk, timezone.now())
        if line.going >= settings.DARSHAN_CHECKS_GOING:
            raise CheckRefused(
                f"{line.going} of your Darshan logs are being read (your checks, and your lab "
                "runs' own), as many as one person may have at once: start the next check "
                "once they are done."
            )
        size = upload.size if upload is not None else 0
        if line.bytes + size > settings.DARSHAN_USER_MAX_BYTES:
            raise CheckRefused(
                "Your logs waiting to be read (your checks', and your lab runs' own) would be "
                f"more than {settings.DARSHAN_USER_MAX_BYTES / MiB:,.0f} MiB: start this one "
                "once they are done."
            )
        if not count_in_hour(user.pk, "starts", settings.DARSHAN_CHECKS_PER_HOUR):
            raise CheckRefused(
                f"You started {settings.DARSHAN_CHECKS_PER_HOUR} checks in this hour, as many "
                "as one person may: start the next one in the next hour."
            )
        if upload is not None:
            fields["log"] = _whole(upload)
        return JobCheck.objects.create(user=user, **fields)


def _whole(upload: File) -> bytes:
    """The upload's bytes, never more than a log may have (its size was checked)."""
    upload.seek(0)
    data = upload.read(settings.DARSHAN_MAX_BYTES + 1)
    if len(data) > settings.DARSHAN_MAX_BYTES:
        raise CheckRefused(too_big(upload.size, settings.DARSHAN_MAX_BYTES))
    return data


# --- what one user has in line ----------------------------------------------------


@dataclass(frozen=True)
class Held:
    """A user's logs in line for the reader: their checks not read yet and their runs'
    logs (waiting for a place, or sent); how many of them the reader has been handed
    (`sent`: a check is sent as it starts); the bytes of them all."""

    going: int
    sent: int
    bytes: int


def hold(user_id: int) -> None:
    """Holds the user's row until the transaction ends: what they have in line is
    counted and added to by one request or task at a time."""
    get_user_model().objects.select_for_update().filter(pk=user_id).first()


def held(user_id: int, now: datetime) -> Held:
    checks = JobCheck.objects.filter(user_id=user_id, io__isnull=True).aggregate(
        n=Count("pk"), bytes=Sum(Length("log"))
    )
    runs = runs_in_line(user_id, now).aggregate(
        n=Count("pk"), sent=Count("pk", filter=Q(sent_at__isnull=False)), bytes=Sum(Length("logs"))
    )
    return Held(
        going=checks["n"] + runs["n"],
        sent=checks["n"] + runs["sent"],
        bytes=(checks["bytes"] or 0) + (runs["bytes"] or 0),
    )


def runs_in_line(user_id: int, now: datetime) -> QuerySet[RunLog]:
    """The user's runs' logs not read yet, waiting for a place or handed to the reader;
    not those whose read was lost (handed over long ago and never begun, or begun and
    never ended): their run page says so."""
    return (
        RunLog.objects.unread()
        .filter(run__user_id=user_id)
        .exclude(
            sent_at__lt=now - timedelta(seconds=RUN_LOGS_QUEUE_WAIT_SECONDS),
            read_started_at__isnull=True,
        )
        .exclude(read_started_at__lt=now - timedelta(seconds=task_seconds()))
    )


def count_in_hour(user_id: int, kind: str, limit: int) -> bool:
    """Counts one more `kind` (checks started, runs' logs taken) for the user in this
    hour; False once that is more than `limit`."""
    key = f"jobio:{kind}:{user_id}:{int(timezone.now().timestamp()) // 3600}"
    cache.add(key, 0, timeout=3600)
    return cache.incr(key) <= limit


# --- ending a check -------------------------------------------------------------


def fail(check: JobCheck, reason: str) -> None:
    """Nothing stays of a log that cannot be read, but the reason, for its owner."""
    cache.set(
        _failure_key(check.pk),
        {"user": check.user_id, "label": check.label, "reason": reason},
        FAILURE_SECONDS,
    )
    JobCheck.objects.filter(pk=check.pk).delete()


def end_lost() -> int:
    """Ends the checks whose reader was lost (a worker killed, a restart) or that
    waited in the queue too long: their owner's page says so, instead of reading
    without end. Returns how many."""
    now = timezone.now()
    lost = JobCheck.objects.filter(
        io__isnull=True,
        read_started_at__lt=now - timedelta(seconds=task_seconds()),
    )
    stuck = JobCheck.objects.filter(
        io__isnull=True,
        read_started_at__isnull=True,
        created_at__lt=now - timedelta(seconds=QUEUE_WAIT_SECONDS),
    )
    ended = 0
    for checks, reason in (
        (lost, "The portal lost the reader of this log (it may have restarted): start the "
               "check again."),
        (stuck, "This log waited an hour without being read (the portal's queue lost it): "
                "start the check again."),
    ):  # fmt: skip
        for check in checks.defer("log"):
            fail(check, reason)
            ended += 1
    return ended


def _failure_key(check_id: object) -> str:
    return f"jobio:failed:{check_id}"


# --- who may see what -------------------------------------------------------------


def visible_check(user: AbstractBaseUser, check_id: object) -> JobCheck | Failure:
    """The check (or what is left of a failed one) if `user` owns it or is staff;
    404 otherwise, the same whether it exists or not. Its page polls this every
    second: never with the log's bytes."""
    check = JobCheck.objects.filter(pk=check_id).defer("log").first()
    if check is not None:
        if check.user_id == user.pk or user.is_staff:
            return check
        raise NotFound("No such check of yours.")
    failed = cache.get(_failure_key(check_id))
    if failed and (failed["user"] == user.pk or user.is_staff):
        return Failure(str(check_id), failed["label"], failed["reason"])
    raise NotFound("No such check of yours.")


def recent_checks(user: AbstractBaseUser, limit: int = 10) -> list[JobCheck]:
    return list(JobCheck.objects.filter(user=user).defer("log")[:limit])
