"""`make bench`: a trainee's runs in turn, written to bench/results/in_turn.json.

A calibration round measures exercise 1a on every dev target, one run at a time
(BENCH_IN_TURN_REPEAT runs of each, default 5): the site's quiet figures. Then a
trainee clicks "Start runs" with every target ticked, BENCH_IN_TURN_TRIES times
(default 10), each once the one before has ended. A try holds when its runs never
overlapped in Slurm, each landed within 15 % of the calibration's median (or inside
its lowest-highest band), and the last figure came within 30 s of the click. Target:
9 tries of 10; the test fails below it. With RUNS_IN_TURN=false the same start shows
what runs of one click measured at once give.
"""

import os
from datetime import UTC, datetime

import pytest
from django.conf import settings as django_settings
from django.test import Client

from bench.conftest import write_results
from tests.in_turn import FOUR_TARGETS, calibrate, finish, start_everywhere

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]

REPEAT = int(os.getenv("BENCH_IN_TURN_REPEAT", "5"))
TRIES = int(os.getenv("BENCH_IN_TURN_TRIES", "10"))
TARGET_SHARE = 0.9
WITHIN_SECONDS = 30


def test_four_targets_in_turn_land_near_the_quiet_figures_nine_tries_of_ten(
    sync_loop, dev_profile, make_cluster_username, make_user, settings
) -> None:
    settings.CALIBRATION_PARALLEL = 1
    staff = make_user(make_cluster_username(), staff=True)
    quiet = calibrate(dev_profile, staff.username, "1a", repeat=REPEAT, targets=FOUR_TARGETS)
    trainee = make_user(make_cluster_username())
    client = Client()
    client.force_login(trainee)
    targets = FOUR_TARGETS

    tries = []
    for _ in range(TRIES):
        start = finish(start_everywhere(client, trainee, "1a", targets))
        figures = {r.target.key: r.result.write_mib_s for r in start.runs if hasattr(r, "result")}
        tries.append(
            {
                "seconds": round(start.seconds, 1),
                "overlapping": start.overlapping(),
                "off": start.off(quiet),
                "percent_of_quiet": {
                    key: round(100 * value / quiet[key].median, 1) for key, value in figures.items()
                },
                "held": not start.overlapping()
                and not start.off(quiet)
                and start.seconds <= WITHIN_SECONDS,
            }
        )
    held = sum(t["held"] for t in tries)
    path = write_results(
        "in_turn",
        {
            "measured_at": datetime.now(UTC).isoformat(),
            "runs_in_turn": django_settings.RUNS_IN_TURN,
            "quiet_mib_s": {
                key: {"median": m.median, "low": m.low, "high": m.high, "runs": len(m.values)}
                for key, m in quiet.items()
            },
            "tries": tries,
            "held": held,
            "of": TRIES,
        },
    )
    print(f"\nfour targets in turn, {TRIES} tries ({path}): {held} held")
    for t in tries:
        print(f"  {t['seconds']} s  {t['percent_of_quiet']}  {t['overlapping'] or ''}")
    assert held >= TARGET_SHARE * TRIES, tries
