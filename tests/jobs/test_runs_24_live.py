"""A run of the portal on the multi-node cluster of Slurm 24.11 (docker/cluster/), the
whole way: the portal submits it through slurmrestd v0.0.42, follows it with one
request a cycle, and the job, on a node that is another host, posts its result back to
the portal over the network; the portal reads the figure."""

import re

import pytest

from jobs.engines import Pattern
from jobs.models import RunStatus
from jobs.submission import start_run
from tests.cluster24 import CLUSTER_NAME, client24
from tests.runs import follow, run_log_of, small_workload

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("pattern", [Pattern.SEQUENTIAL, Pattern.RANDOM])
def test_a_run_completes_on_a_node_of_slurm_24_and_its_result_comes_back(
    portal_on_24, cluster24_username, make_user, disk_target, pattern
) -> None:
    trainee_account = make_user(cluster24_username).cluster_account
    run = start_run(trainee_account, disk_target, small_workload(pattern), time_limit_minutes=2)

    (run,) = follow(run, timeout=120)

    assert run.status == RunStatus.COMPLETED, run.status_reason or run.parse_error
    assert run.result.write_mib_s > 0
    assert run.slurm_job_id and run.result_received_at
    # Its job is the 24.11 cluster's (whose nodes are the only place it could run), and
    # the result came from there: only the cluster's network reaches portal_for_nodes.
    job = client24(cluster24_username).job(cluster24_username, run.slurm_job_id)
    assert job.cluster == CLUSTER_NAME and job.user_name == cluster24_username
    # Darshan recorded it there too (the nodes mount the dev site's runtime).
    assert run_log_of(run).io["bytes_written"] > 0


def test_sixteen_ior_ranks_span_both_nodes_through_the_sites_launcher(
    portal_on_24, settings, cluster24_username, make_user, disk_target
) -> None:
    # The site's launcher: its nodes claim 8 CPUs on 2 cores, so no binding to cores.
    settings.MPI_LAUNCHER = ["mpirun", "--bind-to", "none"]
    trainee_account = make_user(cluster24_username).cluster_account
    sixteen = small_workload(Pattern.SEQUENTIAL, processes=16)
    run = start_run(trainee_account, disk_target, sixteen, engine="ior", time_limit_minutes=2)

    (run,) = follow(run, timeout=150)

    assert run.status == RunStatus.COMPLETED, run.raw_output[-3000:]
    assert (run.result.processes, run.result.engine) == (16, "ior")
    # IOR's own report of where its ranks ran: two nodes.
    assert re.search(r'"nodes": 2\b', run.raw_output)
    # And Darshan's logs from all sixteen, the other node's too (they are written on
    # the shared target), and none from the launcher's processes.
    logs = run_log_of(run)
    assert (len(logs.sizes), logs.io["nprocs"]) == (16, 16), logs.problem
