"""On the live dev cluster: a portal clock 10 s ahead of Slurm's must not freeze runs."""

import time
from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from jobs.models import BenchmarkRun, RunStatus
from jobs.slurm import get_client
from jobs.slurm.models import JobState
from jobs.sync import sync
from tests.cluster import on_controller
from tests.runs import make_run

pytestmark = pytest.mark.django_db(transaction=True)


def held_job() -> int:
    """A job that waits in Slurm until released (submitted as root: any job will do)."""
    argv = ["sbatch", "--hold", "--parsable", "-p", settings.SLURM_PARTITION, "-t", "1"]
    done = on_controller(*argv, "-o", "/dev/null", "--wrap", "true")
    return int(done.stdout.strip().split(";")[0])


def test_runs_follow_slurm_with_the_portal_clock_10_s_ahead(
    trainee_account, disk_target, monkeypatch
) -> None:
    real_now = timezone.now
    monkeypatch.setattr(timezone, "now", lambda: real_now() + timedelta(seconds=10))
    job_id = held_job()
    try:
        run = make_run(
            trainee_account,
            disk_target,
            status=RunStatus.PENDING,
            slurm_job_id=job_id,
            submitted_at=timezone.now(),
        )
        sync()  # reads the job waiting
        assert on_controller("scontrol", "release", str(job_id)).returncode == 0
        deadline = time.monotonic() + 30
        while get_client().job(trainee_account.username, job_id).state != JobState.COMPLETED:
            assert time.monotonic() < deadline, "the released job did not complete"
            time.sleep(0.3)

        # Within the 5 s the old "portal clock minus 5 s" would have been blind for.
        for _ in range(3):
            sync()
            if BenchmarkRun.objects.get(pk=run.pk).status == RunStatus.COMPLETED:
                break
            time.sleep(1)

        assert BenchmarkRun.objects.get(pk=run.pk).status == RunStatus.COMPLETED
    finally:
        on_controller("scancel", str(job_id))
