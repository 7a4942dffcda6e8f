"""The slurmrestd client against the multi-node cluster of today's Slurm (24.11, API
v0.0.42; docker/cluster/): what the recorded answers of tests/jobs/slurmrestd/ stood
in for until now. A job runs as its user on a node of its own with a $TMPDIR Slurm made
for it and removed after it; one request lists every job; a cancel ends one; eight
tasks span both nodes."""

import pytest

from jobs.slurm import JobSpec
from jobs.slurm.models import JobState
from tests.cluster24 import NODES, client24, on_node, wait_until
from tests.names import unique_name

pytestmark = pytest.mark.usefixtures("cluster24")


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


def test_it_finds_v0_0_42_of_slurm_24_11(account24) -> None:
    ping = client24(account24).ping()

    assert (ping.api_version, ping.up, ping.cluster) == ("v0.0.42", True, "storagelab24")
    assert ping.release.startswith("24.11.")


def test_a_job_runs_as_its_user_with_a_tmpdir_of_its_own_that_goes_after_it(account24) -> None:
    client = client24(account24)
    job = spec('echo "$(id -un) on $(hostname -s) in $TMPDIR $(stat -c %U:%a "$TMPDIR")"')
    job_id = client.submit(account24, job)

    done = wait_until(client, account24, job_id, lambda j: j.state.finished)

    assert done.state == JobState.COMPLETED and done.user_name == account24
    said = output_of(job_id, job.name).split()
    assert said[:2] == [account24, "on"] and said[2] in NODES
    assert said[4:] == [f"/tmp/job_{job_id}", f"{account24}:700"]
    assert on_node(said[2], "ls", "/tmp").split().count(f"job_{job_id}") == 0  # removed


def test_one_request_lists_the_job_with_its_state(account24) -> None:
    client = client24(account24)
    job_id = client.submit(account24, spec("true"))
    wait_until(client, account24, job_id, lambda j: j.state.finished)

    listed = client.jobs(account24)

    assert listed is not None and listed.last_update is not None
    assert {j.job_id: j.state for j in listed}[job_id] == JobState.COMPLETED
    assert client.jobs(account24, since=listed.last_update.replace(year=2100)) is None


def test_a_cancelled_job_ends_cancelled(account24) -> None:
    client = client24(account24)
    job_id = client.submit(account24, spec("sleep 120"))
    wait_until(client, account24, job_id, lambda j: j.state == JobState.RUNNING)

    client.cancel(account24, job_id)

    assert (
        wait_until(client, account24, job_id, lambda j: j.state.finished).state
        == JobState.CANCELLED
    )


def test_sixteen_tasks_span_both_nodes(account24) -> None:
    client = client24(account24)
    job = spec("srun hostname -s | sort | uniq -c", tasks=16)  # 8 CPUs a node
    job_id = client.submit(account24, job)

    assert (
        wait_until(client, account24, job_id, lambda j: j.state.finished).state
        == JobState.COMPLETED
    )
    counts = dict(reversed(line.split()) for line in output_of(job_id, job.name).splitlines())
    assert counts == {"slurm-n1": "8", "slurm-n2": "8"}
