"""Where runs work on the multi-node 24.11 cluster (docker/cluster/): the job's own
$TMPDIR, which only its node knows (Slurm's prolog makes it for the job in the node's
memory, its epilog removes it), resolved by the job script when it runs; and the
filesystem over the network, a GlusterFS volume both nodes mount."""

import re
import time

import pytest

from jobs.engines import Pattern, Workload
from jobs.engines.base import KiB
from jobs.models import RunStatus
from jobs.submission import start_run
from tests.cluster24 import NODES, client24, on_node, wait_until
from tests.runs import follow, run_log_of, small_workload

pytestmark = pytest.mark.django_db(transaction=True)


def small_files(processes: int) -> Workload:
    """mdtest's work for `processes` ranks: 50 files of 4 KiB each."""
    return Workload(
        pattern=Pattern.SEQUENTIAL, block_size=4 * KiB, processes=processes,
        size_per_process=50 * 4 * KiB, files_per_process=50,
    )  # fmt: skip


def test_a_run_on_the_jobs_own_tmpdir_works_there_and_leaves_nothing(
    portal_on_24, settings, cluster24_username, make_user, node_tmpdir_target
) -> None:
    settings.RUN_DARSHAN_IN_MEMORY = True  # recorded, to see where it wrote
    trainee_account = make_user(cluster24_username).cluster_account
    run = start_run(trainee_account, node_tmpdir_target, small_workload(), time_limit_minutes=2)

    (run,) = follow(run, timeout=120)

    assert run.status == RunStatus.COMPLETED, run.status_reason or run.parse_error
    assert run.result.write_mib_s > 0
    # Darshan recorded the benchmark's writes: its configuration, which records the
    # run's directory only, named the directory the script resolved on the node.
    assert run_log_of(run).io["bytes_written"] >= 4 * 1024 * 1024
    # The job's directory went with the job, output file and all.
    node = node_of(cluster24_username, run.slurm_job_id)
    assert node in NODES
    assert f"job_{run.slurm_job_id}" not in on_node(node, "ls", "/tmp").split()


def node_of(username: str, job_id: int) -> str:
    return re.search(r"\bBatchHost=(\S+)", job_as_slurm_ends_it(username, job_id))[1]


def job_as_slurm_ends_it(username: str, job_id: int) -> str:
    """`scontrol show job` once the job no longer completes. The portal has the result
    before then; while a node still runs its epilog (removing the job's $TMPDIR), Slurm
    names only the nodes not yet done in NodeList and counts only them in NumNodes, so
    a busy node makes a two-node job look like a one-node one."""
    wait_until(client24(username), username, job_id, lambda job: job.state.finished)
    return on_node("slurm-ctl", "scontrol", "show", "job", str(job_id))


def test_a_variable_the_node_does_not_set_runs_nothing_and_says_why(
    portal_on_24, cluster24_username, make_user, node_tmpdir_target
) -> None:
    node_tmpdir_target.path_template = "$STORAGELAB_NOT_SET"
    node_tmpdir_target.save()
    trainee_account = make_user(cluster24_username).cluster_account
    run = start_run(trainee_account, node_tmpdir_target, small_workload(), time_limit_minutes=2)

    (run,) = follow(run, timeout=120)

    assert run.status == RunStatus.FAILED
    assert run.status_reason.startswith("Nothing was run")
    assert "set on the node" in run.status_reason
    assert "output file was in the target's directory on its node" in run.status_reason


def test_mdtest_ranks_on_both_nodes_share_the_network_filesystem(
    portal_on_24, settings, cluster24_username, make_user, gluster_target
) -> None:
    settings.MPI_LAUNCHER = ["mpirun", "--bind-to", "none"]
    trainee_account = make_user(cluster24_username).cluster_account
    files = small_files(16)  # the nodes have 8 CPUs each
    run = start_run(trainee_account, gluster_target, files, engine="mdtest", time_limit_minutes=2)

    (run,) = follow(run, timeout=150)

    assert run.status == RunStatus.COMPLETED, run.status_reason or run.raw_output[-2000:]
    assert run.result.processes == 16
    assert run.result.create_ops_s > 0 and run.result.remove_ops_s > 0
    shown = job_as_slurm_ends_it(cluster24_username, run.slurm_job_id)
    assert " NodeList=slurm-n[1-2]" in shown, re.findall(
        r"(?:JobState|NodeList|NumNodes)=\S+", shown
    )
    # Nothing is left on the volume, whichever node looks: once the other node's
    # client no longer holds the names in its cache (GlusterFS keeps them about a
    # second; longer when the cluster is busy).
    assert left_on_the_volume(cluster24_username, "slurm-n2") == []


def left_on_the_volume(username: str, node: str, seconds: float = 15) -> list[str]:
    deadline = time.monotonic() + seconds
    while (left := on_node(node, "ls", "-A", f"/gluster/{username}").split()) and (
        time.monotonic() < deadline
    ):
        time.sleep(1)
    return left


def test_a_run_on_the_network_filesystem_is_seen_from_the_other_node(
    portal_on_24, cluster24_username, make_user, gluster_target
) -> None:
    trainee_account = make_user(cluster24_username).cluster_account
    run = start_run(
        trainee_account, gluster_target, small_workload(Pattern.RANDOM), time_limit_minutes=2
    )

    (run,) = follow(run, timeout=120)

    assert run.status == RunStatus.COMPLETED, run.status_reason or run.parse_error
    assert run.result.write_mib_s > 0
    # Darshan's logs name the files in the run's directory on the volume.
    assert run_log_of(run).io["bytes_written"] >= 4 * 1024 * 1024


def test_eight_ranks_on_a_jobs_own_tmpdir_share_one_node(
    portal_on_24, settings, cluster24_username, make_user, node_tmpdir_target
) -> None:
    settings.MPI_LAUNCHER = ["mpirun", "--bind-to", "none"]
    settings.RUN_DARSHAN_IN_MEMORY = True
    trainee_account = make_user(cluster24_username).cluster_account
    files = small_files(8)
    run = start_run(
        trainee_account, node_tmpdir_target, files, engine="mdtest", time_limit_minutes=2
    )

    (run,) = follow(run, timeout=150)

    # A directory each node has its own of holds a run only on one node: mdtest's
    # ranks share the tree rank 0 makes there. The job asked Slurm for one.
    assert run.status == RunStatus.COMPLETED, run.status_reason or run.raw_output[-3000:]
    assert run.result.processes == 8 and run.result.create_ops_s > 0
    shown = job_as_slurm_ends_it(cluster24_username, run.slurm_job_id)
    assert " NumNodes=1 " in shown, re.findall(r"(?:JobState|NodeList|NumNodes)=\S+", shown)
    # Darshan's logs of all eight came (the launcher's are left out).
    assert run_log_of(run).io["nprocs"] == 8
    for node in NODES:
        assert f"job_{run.slurm_job_id}" not in on_node(node, "ls", "/tmp").split()
