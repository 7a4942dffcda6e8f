"""A compute node of the multi-node cluster (Slurm 24.11) stops while a portal run is
on it: the run ends failed, once, saying that its node stopped answering, and the node
comes back into service when it starts again."""

import subprocess
import time

import pytest

from jobs.engines import Pattern, Workload
from jobs.engines.base import MiB
from jobs.models import BenchmarkRun, RunStatus
from jobs.submission import start_run
from tests.cluster import wait_for_status
from tests.cluster24 import NODES, on_node
from tests.runs import follow

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.alone("stops a node of the cluster"),
]


def idle_again(timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while on_node("slurm-ctl", "sinfo", "-h", "-o", "%T").split() != ["idle"]:
        assert time.monotonic() < deadline, "the nodes did not come back"
        time.sleep(1)


def test_a_node_that_stops_mid_run_ends_the_run_failed_with_why(
    portal_on_24, cluster24_username, make_user, disk_target
) -> None:
    trainee_account = make_user(cluster24_username).cluster_account
    long = Workload(
        pattern=Pattern.SEQUENTIAL,
        block_size=MiB,
        processes=1,
        size_per_process=4 * MiB,
        seconds=60,
    )
    run = start_run(trainee_account, disk_target, long, time_limit_minutes=3)
    run = wait_for_status(run, RunStatus.RUNNING, timeout=60)
    node = on_node("slurm-ctl", "squeue", "-h", "-j", str(run.slurm_job_id), "-o", "%N").strip()
    assert node in NODES
    try:
        subprocess.run(["docker", "kill", node], check=True, capture_output=True, timeout=30)

        (run,) = follow(run, timeout=90)
    finally:
        subprocess.run(["docker", "start", node], check=True, capture_output=True, timeout=30)
        idle_again()

    assert (run.status, run.slurm_state) == (RunStatus.FAILED, "NODE_FAIL")
    assert "The node running the job stopped answering" in run.status_reason
    assert BenchmarkRun.objects.filter(slurm_job_id=run.slurm_job_id).count() == 1
    assert not hasattr(run, "result")
