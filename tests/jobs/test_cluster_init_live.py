"""The dev cluster's containers (docker/cluster/) and this host: the cluster's daemons
run as accounts of their own, under UIDs no account of this host has (with no user
namespace a UID is the same number on both sides: slurmrestd under the portal user's
UID, or the munge key owned by postgres's, would hand what is theirs to the other), and
every container runs an init that reaps what ends orphaned: each job's slurmstepd,
which under slurmd as PID 1 stayed a zombie (287 on one node after 20 minutes of a
demo). CLUSTER_PREFIX=h7- points these tests at a second cluster of that prefix
(docker/cluster/start.sh)."""

import grp
import os
import pwd
import stat
import subprocess
import time
from pathlib import Path

import pytest

from jobs.slurm import SlurmClient
from tests.cluster import as_user, trivial_job

PREFIX = os.getenv("CLUSTER_PREFIX", "")
CONTROLLER = f"{PREFIX}slurm-ctl"
NODES = (f"{PREFIX}slurm-n1", f"{PREFIX}slurm-n2")
FILE_SERVERS = (f"{PREFIX}files-1", f"{PREFIX}files-2")
KEYS = Path(os.getenv("STORAGELAB_STATE_DIR", "/var/lib/storagelab")) / f"{PREFIX}cluster"
PORTAL_USER = os.getenv("STORAGELAB_USER", "storagelab")
# What runs in the containers once no job does, and as whom it may run.
DAEMONS = {"munged", "slurmctld", "slurmscriptd", "slurmrestd", "slurmd", "glusterd",
           "glusterfsd", "glusterfs"}  # fmt: skip
# A process that has just ended is a zombie until its parent (the init) reaps it, a
# moment later: at most this many in the whole cluster at one look.
ZOMBIES_AT_ONCE = 2


def processes(container: str) -> list[tuple[int, str, str]]:
    """(UID, state, command name) of each process in the container."""
    found = subprocess.run(
        ["docker", "exec", container, "ps", "-e", "-o", "uid=,stat=,comm="],
        capture_output=True, text=True, check=True, timeout=30,
    )  # fmt: skip
    rows = []
    for line in found.stdout.splitlines():
        uid, state, comm = line.split(None, 2)
        rows.append((int(uid), state, comm.strip()))
    return rows


def host_account(uid: int) -> str | None:
    """The name this host gives the UID, if any."""
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return None


def zombies() -> list[str]:
    return [
        f"{node}: {comm}"
        for node in NODES
        for _, state, comm in processes(node)
        if state.startswith("Z")
    ]


def test_the_clusters_daemons_run_as_no_account_of_this_host(cluster24) -> None:
    uids: dict[str, set[int]] = {}
    for container in (CONTROLLER, *NODES, *FILE_SERVERS):
        for uid, _, comm in processes(container):
            if comm in DAEMONS:
                uids.setdefault(comm, set()).add(uid)
    assert {"munged", "slurmctld", "slurmrestd", "slurmd", "glusterd"} <= uids.keys()
    # Root is root on both sides; any other UID a daemon runs as is its own.
    shared = sorted(
        f"{comm} runs as UID {uid}, which is this host's {host_account(uid)}"
        for comm, found in uids.items()
        for uid in found
        if uid != 0 and host_account(uid)
    )
    assert not shared
    assert uids["munged"] != {0} and uids["slurmctld"] != {0} and uids["slurmrestd"] != {0}


def test_the_clusters_keys_are_its_daemons_and_the_portal_reads_the_jwt_key(cluster24) -> None:
    """On this host the keys belong to the UIDs the daemons run as inside, which no
    account here has; the portal's workers, which sign users' tokens, read the JWT key
    through the portal's group."""
    owner = {comm: uid for uid, _, comm in processes(CONTROLLER)}
    munge_key = (KEYS / "munge.key").stat()
    jwt_key = (KEYS / "etc" / "jwt_hs256.key").stat()

    assert munge_key.st_uid == owner["munged"]
    assert stat.S_IMODE(munge_key.st_mode) == 0o400
    assert host_account(munge_key.st_uid) is None
    assert jwt_key.st_uid == owner["slurmctld"]
    assert host_account(jwt_key.st_uid) is None
    assert stat.S_IMODE(jwt_key.st_mode) == 0o640
    assert jwt_key.st_gid == grp.getgrnam(PORTAL_USER).gr_gid
    as_user(PORTAL_USER, "test", "-r", str(KEYS / "etc" / "jwt_hs256.key"))


def test_every_container_of_the_cluster_runs_dockers_init(cluster24) -> None:
    containers = (CONTROLLER, *NODES, *FILE_SERVERS)
    inits = subprocess.run(
        ["docker", "inspect", "-f", "{{.Name}} {{.HostConfig.Init}}", *containers],
        capture_output=True, text=True, check=True, timeout=30,
    ).stdout.split("\n")  # fmt: skip
    assert sorted(filter(None, inits)) == sorted(f"/{name} true" for name in containers)


@pytest.mark.alone("runs fifty jobs over both nodes and counts what they leave there")
def test_fifty_jobs_leave_no_zombies_on_the_nodes(
    cluster24, slurm_client: SlurmClient, cluster_username: str, scratch_dir: Path
) -> None:
    jobs = {
        slurm_client.submit(cluster_username, trivial_job(scratch_dir, 'touch "ran-$SLURM_JOB_ID"'))
        for _ in range(50)
    }
    deadline = time.monotonic() + 300
    while True:
        states = {job.job_id: job.state for job in slurm_client.jobs(cluster_username) or []}
        if all(job in states and states[job].finished for job in jobs):
            break
        assert time.monotonic() < deadline, "the fifty jobs did not end within 5 minutes"
        time.sleep(1)
    # Each ran, as the user's own on this host too (the nodes share its UIDs).
    ran = list(scratch_dir.glob("ran-*"))
    assert len(ran) == 50
    assert {path.stat().st_uid for path in ran} == {pwd.getpwnam(cluster_username).pw_uid}

    # Their slurmstepd processes end with them (a moment after Slurm calls a job done).
    deadline = time.monotonic() + 10
    while len(left := zombies()) > ZOMBIES_AT_ONCE and time.monotonic() < deadline:
        time.sleep(0.5)
    assert len(left) <= ZOMBIES_AT_ONCE, left
