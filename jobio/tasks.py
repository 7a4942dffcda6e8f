"""The tasks that read checks' logs, on the `darshan` queue and its worker (settings:
CELERY_TASK_ROUTES): thin, the work is in jobio/logdir.py (finding a job's log) and
jobio/sandbox.py (reading one). This module sends them too; jobio/checks.py, which
holds the rules, imports nothing of it."""

import logging

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from jobio import checks, runs
from jobio.logdir import LookupRefused, fetch
from jobio.models import CheckSource, JobCheck
from jobio.sandbox import LogUnreadable, parse_bytes_with_site_limits
from jobs.models import BenchmarkRun

log = logging.getLogger(__name__)


def read_once_committed(check: JobCheck) -> None:
    """Sends the check's read once its row is committed; a queue that does not take
    it fails the check at once, saying so."""

    def send() -> None:
        try:
            read_check.delay(str(check.pk))
        except Exception:
            log.exception("check %s: the task queue did not take it", check.pk)
            checks.fail(
                check,
                "The portal's task queue is not answering, so the log was not read: try "
                "again in a minute.",
            )

    transaction.on_commit(send)


@shared_task(
    name="jobio.tasks.read_check",
    time_limit=checks.task_seconds(),
    soft_time_limit=checks.task_seconds() - checks.TIME_MARGIN_SECONDS // 2,
)
def read_check(check_id: str) -> None:
    """Reads the check's log into its I/O, or fails the check (nothing stays).
    Idempotent: a check already begun, read or gone is left as it is."""
    begun = JobCheck.objects.filter(
        pk=check_id, io__isnull=True, read_started_at__isnull=True
    ).update(read_started_at=timezone.now())
    check = JobCheck.objects.filter(pk=check_id).first() if begun else None
    if check is None:
        return
    try:
        _read(check)
    finally:
        # Its place with the reader is free: a run's logs waiting for one take it.
        send_waiting_run_logs(check.user_id)


def _read(check: JobCheck) -> None:
    try:
        data = _log_of(check)
        io = parse_bytes_with_site_limits(data)
    except (LookupRefused, LogUnreadable) as e:
        checks.fail(check, str(e))
        return
    except SoftTimeLimitExceeded:
        checks.fail(check, "Reading this log took too long, so it was stopped. Is it damaged?")
        return
    if check.expected_uid is not None and io.uid != check.expected_uid:
        # Which account wrote it is not said: it is someone else's.
        checks.fail(
            check,
            f"The log of job {check.job_id or io.job_id} was not written by your cluster "
            "account: you may check your own jobs only.",
        )
        return
    JobCheck.objects.filter(pk=check.pk).update(io=io.to_json(), log=None)


def _log_of(check: JobCheck) -> bytes:
    if check.source == CheckSource.LOG_DIR:
        return fetch(
            settings.DARSHAN_LOG_DIR,
            check.job_id,
            check.expected_uid,
            days=settings.DARSHAN_LOG_DAYS,
            max_bytes=settings.DARSHAN_MAX_BYTES,
            seconds=settings.DARSHAN_LOOKUP_SECONDS,
            today=timezone.localdate(),
        )
    return bytes(check.log or b"")


@shared_task(name="jobio.tasks.end_lost_checks")
def end_lost_checks() -> None:
    checks.end_lost()
    # Runs' logs whose owner has a place free (a read lost, a message not taken).
    for user_id in runs.users_waiting():
        send_waiting_run_logs(user_id)


def read_run_logs_once_committed(run_id: int) -> None:
    """Sends the read of a run's logs once their row is committed. A queue that does
    not take it leaves them unread, and the run page says so after a while."""

    def send() -> None:
        try:
            read_run_logs.delay(run_id)
        except Exception:
            log.exception("run %s: the task queue did not take its Darshan logs", run_id)

    transaction.on_commit(send)


@shared_task(
    name="jobio.tasks.read_run_logs",
    time_limit=checks.task_seconds(),
    soft_time_limit=checks.task_seconds() - checks.TIME_MARGIN_SECONDS // 2,
)
def read_run_logs(run_id: int) -> None:
    try:
        runs.read(run_id)
    except SoftTimeLimitExceeded:
        log.warning("run %s: reading its Darshan logs took too long", run_id)
    finally:
        # Its place with the reader is free: the owner's next logs waiting take it.
        owner = BenchmarkRun.objects.filter(pk=run_id).values_list("user_id", flat=True).first()
        if owner is not None:
            send_waiting_run_logs(owner)


def send_waiting_run_logs(user_id: int) -> None:
    """Has the user's runs' logs that wait for a place with the reader read, as many
    as have one now (jobio/runs.py: send_next)."""
    for run_id in runs.send_next(user_id):
        read_run_logs_once_committed(run_id)
