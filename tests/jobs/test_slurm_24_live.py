"""The slurmrestd client against the multi-node cluster of today's Slurm (24.11, API
v0.0.42; docker/cluster/): what the recorded answers of tests/jobs/slurmrestd/ stood
in for until now. A job runs as its user on a node of its own with a $TMPDIR Slurm made
for it and removed after it; one request lists every job; a cancel ends one; eight
tasks span both nodes."""

import subprocess
from pathlib import Path

import pytest

from jobs.slurm import JobSpec
from jobs.slurm.models import JobState
from tests.cluster24 import (
    API_VERSION,
    CLUSTER_NAME,
    NODES,
    RELEASE,
    client24,
    on_node,
    wait_until,
)
from tests.names import unique_name

pytestmark = pytest.mark.usefixtures("cluster24")
ROOT = Path(__file__).resolve().parents[2]


def spec(body: str, tasks: int = 1) -> JobSpec:
    name = unique_name("t24")
    return JobSpec(
        name=name,
        script=f"#!/bin/bash\n{body}\n",
        partition="debug",
        working_directory="/tmp",
        standard_output=f"/tmp/{name}-%j.out",
        time_limit_minutes=1,
        tasks=tasks,
        environment={"PATH": "/usr/bin:/bin", "HOME": "/tmp"},
    )


def output_of(job_id: int, name: str) -> str:
    """The job's output file, from whichever node ran its batch script."""
    return "".join(
        on_node(node, "sh", "-c", f"cat /tmp/{name}-{job_id}.out 2>/dev/null") for node in NODES
    )


def test_it_finds_the_newest_api_of_the_clusters_slurm(cluster24_username) -> None:
    ping = client24(cluster24_username).ping()

    assert (ping.api_version, ping.up, ping.cluster) == (API_VERSION, True, CLUSTER_NAME)
    assert ping.release.startswith(f"{RELEASE}.")


def test_a_job_runs_as_its_user_with_a_tmpdir_of_its_own_that_goes_after_it(
    cluster24_username,
) -> None:
    client = client24(cluster24_username)
    job = spec('echo "$(id -un) on $(hostname -s) in $TMPDIR $(stat -c %U:%a "$TMPDIR")"')
    job_id = client.submit(cluster24_username, job)

    done = wait_until(client, cluster24_username, job_id, lambda j: j.state.finished)

    assert done.state == JobState.COMPLETED and done.user_name == cluster24_username
    said = output_of(job_id, job.name).split()
    assert said[:2] == [cluster24_username, "on"] and said[2] in NODES
    assert said[4:] == [f"/tmp/slurm-jobs/job_{job_id}", f"{cluster24_username}:700"]
    assert f"job_{job_id}" not in on_node(said[2], "ls", "/tmp/slurm-jobs").split()  # removed


def test_a_tmpdir_another_user_planted_neither_fails_the_job_nor_is_its_tmpdir(
    cluster24_username, make_cluster_username
) -> None:
    """Job ids are sequential: another user of the node can make the next ones'
    directories before their jobs. Where a job's $TMPDIR is made, only root writes."""
    other = make_cluster_username()
    subprocess.run([str(ROOT / "docker/cluster/account.sh"), other], check=True, timeout=60)
    client = client24(cluster24_username)
    first = client.submit(cluster24_username, spec("true"))
    wait_until(client, cluster24_username, first, lambda j: j.state.finished)
    coming = range(first + 1, first + 21)
    for node in NODES:
        plant = " ; ".join(
            f"mkdir -m 777 /tmp/job_{n}; mkdir /tmp/slurm-jobs/job_{n}" for n in coming
        )
        on_node(node, "runuser", "-u", other, "--", "sh", "-c", plant + " ; true")
        # Only the old place took them: the new one is root's alone. (Other tests' jobs
        # may take some of these ids meanwhile: their directories are root's.)
        assert on_node(node, "find", "/tmp/slurm-jobs", "-mindepth", "1", "-user", other) == ""

    job = spec('echo "$TMPDIR $(stat -c %U:%a "$TMPDIR")"')
    job_id = client.submit(cluster24_username, job)
    done = wait_until(client, cluster24_username, job_id, lambda j: j.state.finished)

    assert job_id in coming, "another job took the planted ids: plant more"
    assert done.state == JobState.COMPLETED
    assert output_of(job_id, job.name).split() == [
        f"/tmp/slurm-jobs/job_{job_id}",
        f"{cluster24_username}:700",
    ]
    planted = [f"/tmp/job_{n}" for n in coming]
    for node in NODES:
        on_node(node, "rm", "-rf", *planted)


def test_one_request_lists_the_job_with_its_state(cluster24_username) -> None:
    client = client24(cluster24_username)
    job_id = client.submit(cluster24_username, spec("true"))
    wait_until(client, cluster24_username, job_id, lambda j: j.state.finished)

    listed = client.jobs(cluster24_username)

    assert listed is not None and listed.last_update is not None
    assert {j.job_id: j.state for j in listed}[job_id] == JobState.COMPLETED
    assert client.jobs(cluster24_username, since=listed.last_update.replace(year=2100)) is None


def test_a_cancelled_job_ends_cancelled(cluster24_username) -> None:
    client = client24(cluster24_username)
    job_id = client.submit(cluster24_username, spec("sleep 120"))
    wait_until(client, cluster24_username, job_id, lambda j: j.state == JobState.RUNNING)

    client.cancel(cluster24_username, job_id)

    assert (
        wait_until(client, cluster24_username, job_id, lambda j: j.state.finished).state
        == JobState.CANCELLED
    )


def test_sixteen_tasks_span_both_nodes(cluster24_username) -> None:
    client = client24(cluster24_username)
    job = spec("srun hostname -s | sort | uniq -c", tasks=16)  # 8 CPUs a node
    job_id = client.submit(cluster24_username, job)

    assert (
        wait_until(client, cluster24_username, job_id, lambda j: j.state.finished).state
        == JobState.COMPLETED
    )
    counts = dict(reversed(line.split()) for line in output_of(job_id, job.name).splitlines())
    assert counts == {"slurm-n1": "8", "slurm-n2": "8"}
