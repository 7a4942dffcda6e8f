"""slurmctld of the multi-node cluster (Slurm 24.11) restarted under a portal run: the
job goes on on its node, the controller takes it back from its saved state, and the
run completes once, with its figure."""

import subprocess
import time
from contextlib import suppress

import pytest

from jobs.engines import Pattern, Workload
from jobs.engines.base import MiB
from jobs.models import BenchmarkRun, RunStatus
from jobs.slurm import SlurmError
from jobs.submission import start_run
from jobs.sync import sync
from tests.cluster import wait_for_status
from tests.cluster24 import answers

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.alone("stops the cluster's slurmctld"),
]


def test_a_run_completes_once_across_a_restart_of_slurmctld(
    portal_on_24, cluster24_username, make_user, disk_target
) -> None:
    trainee_account = make_user(cluster24_username).cluster_account
    timed = Workload(
        pattern=Pattern.SEQUENTIAL, block_size=MiB, processes=1, size_per_process=4 * MiB, seconds=8
    )
    run = start_run(trainee_account, disk_target, timed, time_limit_minutes=2)
    run = wait_for_status(run, RunStatus.RUNNING, timeout=60)

    subprocess.run(["docker", "restart", "slurm-ctl"], check=True, capture_output=True, timeout=60)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        # While the controller and slurmrestd start again, a cycle fails; the next asks.
        with suppress(SlurmError):
            sync()
        run = BenchmarkRun.objects.select_related("result").get(pk=run.pk)
        if run.status == RunStatus.COMPLETED and hasattr(run, "result"):
            break
        time.sleep(0.5)

    assert answers()
    assert run.status == RunStatus.COMPLETED, (run.status, run.status_reason)
    assert run.result.write_mib_s > 0
    assert BenchmarkRun.objects.filter(slurm_job_id=run.slurm_job_id).count() == 1
