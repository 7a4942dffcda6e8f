"""The task that reads a check's log: thin, the work is in jobio/sandbox.py."""

import tempfile
from pathlib import Path

from celery import shared_task
from django.conf import settings

from jobio.checks import fail
from jobio.models import JobCheck
from jobio.sandbox import LogUnreadable, parse_with_site_limits

# Beyond the sandbox's own limit: a worker that lost its child still lets go.
TIME_MARGIN_SECONDS = 30


@shared_task(
    time_limit=settings.DARSHAN_PARSE_SECONDS + TIME_MARGIN_SECONDS,
    soft_time_limit=settings.DARSHAN_PARSE_SECONDS + TIME_MARGIN_SECONDS // 2,
)
def read_check(check_id: str) -> None:
    """Reads the log into the check's profile, or fails the check (nothing stays).
    Idempotent: a check already read, or gone, is left as it is."""
    check = JobCheck.objects.filter(pk=check_id, profile__isnull=True).first()
    if check is None or check.log is None:
        return
    with tempfile.TemporaryDirectory(prefix="jobio-") as folder:
        path = Path(folder) / "job.darshan"  # our name, never the upload's
        path.write_bytes(bytes(check.log))
        try:
            profile = parse_with_site_limits(path)
        except LogUnreadable as e:
            fail(check, str(e))
            return
    if check.expected_uid is not None and profile.uid != check.expected_uid:
        fail(
            check,
            f"Job {profile.job_id} ran as UID {profile.uid}, not as your cluster account "
            f"(UID {check.expected_uid}): you may check your own jobs only.",
        )
        return
    JobCheck.objects.filter(pk=check.pk).update(profile=profile.to_json(), log=None)
