"""The network between a node of the multi-node cluster (Slurm 24.11) and the portal
cut while the node's job ends: the job keeps its result and tries again, and the
result arrives once the network is back; the run completes once, with its figure."""

import time
from urllib.parse import urlsplit

import pytest

from jobs.engines import Pattern, Workload
from jobs.engines.base import MiB
from jobs.models import BenchmarkRun, RunStatus
from jobs.submission import start_run
from jobs.sync import sync
from tests.cluster import wait_for_status
from tests.cluster24 import CuttableLink, bridge_address
from tests.runs import follow

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.alone("cuts a node off the portal"),
]


def test_a_result_sent_while_the_network_is_cut_arrives_when_it_is_back(
    portal_on_24, settings, live_server, cluster24_username, make_user, disk_target
) -> None:
    link = CuttableLink(bridge_address(), urlsplit(live_server.url).port)
    settings.PORTAL_CALLBACK_URL = link.url
    trainee_account = make_user(cluster24_username).cluster_account
    timed = Workload(
        pattern=Pattern.SEQUENTIAL, block_size=MiB, processes=1, size_per_process=4 * MiB, seconds=3
    )
    try:
        run = start_run(trainee_account, disk_target, timed, time_limit_minutes=3)
        wait_for_status(run, RunStatus.RUNNING, timeout=60)
        link.cut = True
        # The benchmark (3 s) ends and its posts are dropped: the job holds on to its
        # result and asks again, with pauses growing (the script's retries).
        time.sleep(8)
        sync()
        run = BenchmarkRun.objects.get(pk=run.pk)
        assert (run.status, run.result_received_at) == (RunStatus.RUNNING, None)

        link.cut = False
        (run,) = follow(run, timeout=90)
    finally:
        link.close()

    assert run.status == RunStatus.COMPLETED, (run.status, run.status_reason)
    assert run.result.write_mib_s > 0
    assert BenchmarkRun.objects.filter(slurm_job_id=run.slurm_job_id).count() == 1
