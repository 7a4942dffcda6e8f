"""A storage scan or purge as the jobs' one road asks for its job (jobs/app_jobs.py,
registered from apps.py): the row's job while it waits for one, its secret's hash,
what Slurm answered. scans.py starts them and reads their answers."""

from django.conf import settings
from django.utils import timezone

from exercises.catalogue import profiles
from exercises.quotas.models import StorageScan
from exercises.quotas.scans import fail, render_script, runs_on, time_limit_minutes
from jobs.slurm import JobSpec


class ScanJobs:
    """A scan's or a purge's job, as jobs/app_jobs.py asks for it: from the active
    profile's targets when it goes (the targets every caller passes to `start`)."""

    def job(self, row_id: int) -> tuple[str, JobSpec] | None:
        waiting = StorageScan.objects.filter(
            pk=row_id, status=StorageScan.Status.SUBMITTED, slurm_job_id__isnull=True
        )
        scan = waiting.select_related("account").first()
        if scan is None:
            return None  # ended (its deadline, a second task), or has its job
        profile = profiles.active()
        targets = runs_on(scan.kind, list(profile.targets.all()) if profile else [])
        if not targets:
            fail(scan, "there is no target here this can run on")
            return None
        spec = JobSpec(
            name=f"storagelab-{scan.kind}-{str(scan.key)[:8]}",
            script=render_script(scan, targets),
            partition=settings.SLURM_PARTITION,
            working_directory="/",
            standard_output="/dev/null",
            time_limit_minutes=time_limit_minutes(len(targets)),
            tasks=1,
            nodes=1,
            environment={"PATH": settings.JOB_PATH, "USER": scan.account.username},
        )
        return scan.account.username, spec

    def secret(self, row_id: int, hashed: str) -> None:
        StorageScan.objects.filter(pk=row_id).update(token_hash=hashed)

    def submitted(self, row_id: int, job_id: int) -> None:
        scan = StorageScan.objects.filter(pk=row_id).first()
        if scan is None:
            return
        # Its time counts from now: its place in the rate limit may have come late.
        deadline = timezone.now() + (scan.deadline - scan.started_at)
        StorageScan.objects.filter(pk=row_id).update(slurm_job_id=job_id, deadline=deadline)

    def failed(self, row_id: int, why: str) -> None:
        scan = StorageScan.objects.filter(pk=row_id).first()
        if scan is not None:
            fail(scan, why)
