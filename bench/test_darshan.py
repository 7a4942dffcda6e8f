"""`make bench`: what recording a run with Darshan costs its figure, written to
bench/results/darshan.json.

Exercises 1a and 2a run on $GLOBAL, $SCRATCH and $TMPDIR in BENCH_DARSHAN_PAIRS pairs
(default 6): in each pair the same run once with the site's runtime preloaded and once
without, one after the other, which first alternating from pair to pair (so that a
drift of the machine falls on both alike). Reported per exercise and target: the
median of the pairs' ratios (with / without) and their lowest and highest, beside the
run-to-run spread of the runs without Darshan (their coefficient of variation).

Target: on the targets the portal records (those with a disk), the median ratio is
within that spread of 1, or within 1 % where the spread is smaller (the dev cluster's
throttled devices repeat a figure to a few hundredths of a percent; no lesson rests on
1 %). $TMPDIR, in memory, is measured too, to say why its runs are not recorded
(RUN_DARSHAN_IN_MEMORY); the test does not judge it.
"""

import os
import statistics
import time
from datetime import UTC, datetime

import pytest
from django.conf import settings

from bench.conftest import write_results
from exercises.lab.start import start_exercise_run
from jobio.models import RunLog
from jobs.models import RunStatus
from tests.runs import follow

pytestmark = [
    pytest.mark.live,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not settings.RUN_DARSHAN_RUNTIME, reason="the dev env names the runtime"),
]

PAIRS = int(os.getenv("BENCH_DARSHAN_PAIRS", "6"))
EXERCISES = ("1a", "2a")
TARGETS = ("global", "scratch", "tmp")
RECORDED = ("global", "scratch")  # with a disk: the portal records their runs
FLOOR = 0.01


def one_run(profile, account, exercise: str, target: str) -> float | None:
    run = start_exercise_run(
        account, profile.exercises.get(key=exercise), profile.targets.get(key=target)
    )
    (run,) = follow(run, timeout=120)
    if run.status != RunStatus.COMPLETED or not hasattr(run, "result"):
        return None
    return run.result.write_mib_s


def test_darshan_changes_no_figure_beyond_its_run_to_run_spread(
    live_portal, dev_profile, trainee_account, settings
) -> None:
    runtime = settings.RUN_DARSHAN_RUNTIME
    settings.RUN_DARSHAN_IN_MEMORY = True  # $TMPDIR too, to measure what it would cost
    figures: dict[str, dict[str, list[float | None]]] = {}
    for pair in range(PAIRS):
        for exercise in EXERCISES:
            for target in TARGETS:
                cell = figures.setdefault(f"{exercise}/{target}", {"with": [], "without": []})
                order = ("with", "without") if pair % 2 == 0 else ("without", "with")
                for how in order:
                    settings.RUN_DARSHAN_RUNTIME = runtime if how == "with" else ""
                    cell[how].append(one_run(dev_profile, trainee_account, exercise, target))
    settings.RUN_DARSHAN_RUNTIME = runtime
    expected = PAIRS * len(EXERCISES) * len(TARGETS)
    for _ in range(60):  # the last run's logs follow its result
        recorded = RunLog.objects.filter(io__isnull=False).count()
        if recorded == expected:
            break
        time.sleep(0.5)

    report = {}
    for side, cell in figures.items():
        pairs = [(w, wo) for w, wo in zip(cell["with"], cell["without"], strict=True) if w and wo]
        ratios = [w / wo for w, wo in pairs]
        without = [wo for _, wo in pairs]
        cv = statistics.stdev(without) / statistics.mean(without) if len(without) > 1 else None
        report[side] = {
            "pairs": len(pairs),
            "median_ratio": statistics.median(ratios) if ratios else None,
            "lowest_ratio": min(ratios, default=None),
            "highest_ratio": max(ratios, default=None),
            "spread_without_cv": cv,
            "with_mib_s": cell["with"],
            "without_mib_s": cell["without"],
        }
    path = write_results(
        "darshan",
        {
            "measured_at": datetime.now(UTC).isoformat(),
            "pairs": PAIRS,
            "runs_recorded_with_their_io": recorded,
            "figures": report,
        },
    )
    print(f"\nDarshan's cost, {PAIRS} pairs per exercise and target ({path}):")
    for side, r in report.items():
        print(
            f"  {side}: median with/without {r['median_ratio']:.3f} "
            f"(lowest {r['lowest_ratio']:.3f}, highest {r['highest_ratio']:.3f}); "
            f"run-to-run spread without: CV {r['spread_without_cv']:.1%}"
        )
    assert recorded == expected  # every run "with" has its I/O read
    for side, r in report.items():
        assert r["pairs"] == PAIRS, side
        if side.split("/")[1] in RECORDED:
            assert abs(r["median_ratio"] - 1) <= max(r["spread_without_cv"], FLOOR), (side, r)
