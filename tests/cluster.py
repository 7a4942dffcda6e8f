"""Jobs for the dev cluster in tests: a trivial one, one that holds every CPU, and
waiting, with the sync, for a run to reach a status; a command as another user of the
machine (an intruder planting files, a trainee making a directory)."""

import os
import subprocess
import time
from pathlib import Path

from django.conf import settings

from jobs.models import BenchmarkRun
from jobs.slurm import JobSpec
from jobs.sync import sync
from tests.names import unique_name


def as_user(user: str, *argv: str) -> str:
    """What `argv` prints, run as the Unix account `user` (it must succeed)."""
    done = subprocess.run(
        ["runuser", "-u", user, "--", *argv], capture_output=True, text=True, check=True
    )
    return done.stdout


# The dev cluster's controller (docker/cluster/): Slurm's own commands run there.
CONTROLLER = "slurm-ctl"


def on_controller(*argv: str, user: str | None = None) -> subprocess.CompletedProcess:
    """`argv` run on the cluster's controller (as `user`, else root): Slurm's commands,
    which this host does not have."""
    as_whom = ["--user", user] if user else []
    return subprocess.run(
        ["docker", "exec", *as_whom, CONTROLLER, *argv], capture_output=True, text=True, timeout=60
    )


def trivial_job(directory: Path, script_body: str) -> JobSpec:
    return JobSpec(
        name=unique_name("t-trivial"),
        script=f"#!/bin/bash\n{script_body}\n",
        partition=settings.SLURM_PARTITION,
        working_directory=str(directory),
        standard_output=str(directory / "slurm-%j.out"),
        time_limit_minutes=1,
        environment={"PATH": "/usr/bin:/bin", "HOME": str(directory)},
    )


def wait_for_status(run: BenchmarkRun, *wanted: str, timeout: float = 30) -> BenchmarkRun:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run.refresh_from_db()
        if run.status in wanted:
            return run
        sync()
        time.sleep(0.2)
    raise AssertionError(f"run stayed {run.status}, wanted {wanted}")


def cpu_hog(directory: Path) -> JobSpec:
    """A job holding every CPU of the cluster, so the next job waits. A node has the
    CPUs slurm.conf gives it, more than the machine's (docker/cluster/slurm.conf.in)."""
    node_cpus = on_controller("sinfo", "--noheader", "--Node", "--format=%c").stdout.split()
    # Every CPU of every node: a task on each, holding all of its node's.
    return JobSpec(
        name="t-blocker",
        script="#!/bin/bash\nsleep 60\n",
        partition="debug",
        working_directory=str(directory),
        standard_output="/dev/null",
        time_limit_minutes=2,
        nodes=len(node_cpus) or 1,
        tasks=len(node_cpus) or 1,
        cpus_per_task=int(node_cpus[0]) if node_cpus else os.cpu_count() or 1,
        environment={"PATH": "/usr/bin:/bin"},
    )
