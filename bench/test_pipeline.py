"""`make bench`: figures of the run pipeline, written to bench/results/pipeline.json.

- slurmrestd requests per sync cycle with 1, 10, 100 and 1,000 active runs (target 1)
- request → job submitted, median (target < 0.5 s)
- benchmark end → parsed result stored, median (target < 2 s)
- fidelity: one fio workload through the portal vs run directly, median of 5 (±10%)
"""

import json
import statistics
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from django.core.cache import cache
from django.utils import timezone

from bench.conftest import write_results
from jobs.engines import Target
from jobs.engines.base import MiB, Pattern, Workload
from jobs.engines.fio import Fio
from jobs.models import BenchmarkRun, RunStatus
from jobs.slurm import get_client
from jobs.submission import start_run
from jobs.sync import SYNC_SINCE_KEY, sync
from tests.runs import follow, small_workload

pytestmark = pytest.mark.django_db(transaction=True)

FIGURES: dict = {"measured_at": datetime.now(UTC).isoformat()}
FIDELITY_WORKLOAD = Workload(
    pattern=Pattern.SEQUENTIAL, block_size=1 * MiB, processes=1, size_per_process=256 * MiB
)


def count_requests() -> list[httpx.Request]:
    seen: list[httpx.Request] = []
    hooks = get_client()._http.event_hooks
    hooks["request"] = [*hooks.get("request", []), seen.append]
    return seen


@pytest.mark.parametrize("active", [1, 10, 100, 1000])
def test_requests_per_sync_cycle(trainee, disk_target, active) -> None:
    now = timezone.now()
    BenchmarkRun.objects.bulk_create(
        BenchmarkRun(
            user=trainee.user,
            cluster_username=trainee.username,
            target=disk_target,
            target_directory="/nonexistent",
            workload=small_workload().model_dump(mode="json"),
            time_limit_minutes=1,
            result_token_hash="x",
            status=RunStatus.RUNNING,
            slurm_job_id=10**8 + i,
            submitted_at=now,
        )
        for i in range(active)
    )
    cache.delete(SYNC_SINCE_KEY)
    get_client().api_version()  # discovery is once per process, not per cycle
    seen = count_requests()
    cycles = []
    for _ in range(3):  # the first cycle fetches everything, later ones may get a 304
        before = len(seen)
        started = time.perf_counter()
        sync()
        cycles.append({"requests": len(seen) - before, "seconds": time.perf_counter() - started})
    FIGURES.setdefault("requests_per_sync_cycle", {})[str(active)] = cycles
    assert all(cycle["requests"] == 1 for cycle in cycles)


def test_submission_and_result_latency(live_portal, trainee, disk_target) -> None:
    runs = []
    for _ in range(10):
        runs.append(start_run(trainee, disk_target, small_workload()))
        time.sleep(0.3)
    done = follow(*runs, timeout=180)

    to_submitted = [(r.submitted_at - r.created_at).total_seconds() for r in done]
    to_parsed = []
    for run in done:
        fio_end = json.loads(run.raw_output[run.raw_output.index("{") :])["timestamp_ms"] / 1000
        to_parsed.append(run.result.created_at.timestamp() - fio_end)
    FIGURES["request_to_submitted_s"] = {
        "median": statistics.median(to_submitted),
        "max": max(to_submitted),
        "n": len(done),
    }
    FIGURES["benchmark_end_to_result_stored_s"] = {
        "median": statistics.median(to_parsed),
        "max": max(to_parsed),
        "n": len(done),
    }
    assert all(run.status == RunStatus.COMPLETED for run in done)


@pytest.mark.parametrize("on", ["disk", "tmpfs"])
def test_fidelity_portal_vs_direct(live_portal, trainee, disk_target, tmpfs_target, on) -> None:
    target = disk_target if on == "disk" else tmpfs_target
    directory = Path(target.directory_for(trainee.username))
    portal, direct = [], []
    for i in range(5):
        # Each measurement starts with no dirty pages of the previous one.
        subprocess.run(["sync"], check=True)
        run = start_run(trainee, target, FIDELITY_WORKLOAD, time_limit_minutes=5)
        (run,) = follow(run, timeout=300)
        portal.append(run.result.write_bytes_per_s / MiB)
        subprocess.run(["sync"], check=True)
        direct.append(run_fio_directly(trainee.username, directory / f"direct-{i}", target))
    ratio = statistics.median(portal) / statistics.median(direct)
    FIGURES.setdefault("fidelity", {"workload": FIDELITY_WORKLOAD.model_dump(mode="json")})[on] = {
        "portal_mib_s": portal,
        "direct_mib_s": direct,
        "portal_median_mib_s": statistics.median(portal),
        "direct_median_mib_s": statistics.median(direct),
        "ratio": ratio,
    }
    assert 0.9 <= ratio <= 1.1


def run_fio_directly(user: str, directory: Path, target) -> float:
    """The same argv the job runs, started by hand as the same user."""
    subprocess.run(["runuser", "-u", user, "--", "mkdir", "-p", str(directory)], check=True)
    argv = Fio().command(
        FIDELITY_WORKLOAD, Target(directory=str(directory), tmpfs=target.in_memory)
    )
    out = subprocess.run(
        ["runuser", "-u", user, "--", *argv],
        cwd=directory,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    subprocess.run(["rm", "-rf", str(directory)], check=True)
    return Fio().parse(out).write_bytes_per_s / MiB


def summary() -> str:
    lines = ["", "Pipeline figures (bench/results/pipeline.json):"]
    for active, cycles in FIGURES.get("requests_per_sync_cycle", {}).items():
        requests = max(c["requests"] for c in cycles)
        slowest = max(c["seconds"] for c in cycles)
        lines.append(
            f"  sync cycle, {active:>4} active runs: {requests} request(s), <= {slowest:.3f} s"
        )
    for key, label in (
        ("request_to_submitted_s", "request -> job submitted"),
        ("benchmark_end_to_result_stored_s", "benchmark end -> result stored"),
    ):
        if key in FIGURES:
            f = FIGURES[key]
            lines.append(
                f"  {label}: median {f['median']:.3f} s, max {f['max']:.3f} s (n={f['n']})"
            )
    for on, f in FIGURES.get("fidelity", {}).items():
        if on != "workload":
            lines.append(
                f"  fidelity on {on}: portal {f['portal_median_mib_s']:.0f} MiB/s vs direct "
                f"{f['direct_median_mib_s']:.0f} MiB/s (ratio {f['ratio']:.2f})"
            )
    return "\n".join(lines)


def teardown_module() -> None:
    write_results("pipeline", FIGURES)
    print(summary())
