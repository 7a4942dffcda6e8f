"""Benchmarks reuse the test fixtures: a test database, the live server, a real
Celery worker and real cluster accounts."""

import json
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import *  # noqa: F403

RESULTS = Path(__file__).parent / "results"


def write_results(name: str, figures: dict) -> Path:
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(figures, indent=2, default=str) + "\n")
    return path


def pct(values: list[float], p: int) -> float:
    """The p-th percentile, as the benches report it: the value below which p % lie."""
    values = sorted(values)
    return values[max(0, int(len(values) * p / 100) - 1)] if values else 0.0


@pytest.fixture(scope="session", autouse=True)
def quiet_cluster() -> None:
    """A bench measures the portal with the cluster to itself: jobs already in Slurm
    (a calibration round that `make demo` started goes on whenever the services run)
    would share its cores and its targets, and its figures would be theirs too."""
    answer = subprocess.run(
        ["docker", "exec", "slurm-ctl", "squeue", "--noheader", "--format=%u"],
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    if answer.returncode != 0:
        pytest.exit(f"cannot ask the dev cluster for its jobs: {answer.stderr.strip()[:300]}", 2)
    jobs = Counter(answer.stdout.split())
    if jobs:
        whose = ", ".join(f"{n} of {user}" for user, n in jobs.most_common())
        n = sum(jobs.values())
        pytest.exit(
            f"the dev cluster is not quiet: {n} job{'s are' if n > 1 else ' is'} in Slurm "
            f"({whose}). "
            "Wait for them, or cancel them (a calibration round: on /lab/calibration/ as "
            "its starter or staff), then run the bench again.",
            2,
        )
