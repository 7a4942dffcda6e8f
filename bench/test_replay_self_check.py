"""`make bench`: the replay's self-check on every exercise of the dev site and every
target (tests/replay_check.py), written to bench/results/replay_self_check.json.

Each exercise's own Darshan log is replayed on each target right after the exercise
ran there; target: every pair within ±30 %, and every pair of targets the exercise
tells apart kept in its order. The bench reports every pair; it fails where a claim
of an exercise's lesson does not hold on the replays' figures, or where the replay of
an exercise that goes past the page cache (as the replay does) puts two targets the
other way round. Pairs of exercises through the cache are marked "cached".
"""

from datetime import UTC, datetime

import pytest

from bench.conftest import write_results
from tests.replay_check import lessons_on_replays, order_broken, self_check

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]


def test_each_exercises_own_log_replayed_measures_what_the_exercise_does(
    live_portal, dev_profile, trainee_account, settings
) -> None:
    settings.RUN_DARSHAN_PER_HOUR = 10_000  # counted per user id, which test databases reuse
    # A sweep of request sizes (9) is six workloads in one run: no log of it is one job
    # to replay against the run's one figure.
    exercises = [e.key for e in dev_profile.exercises.order_by("order") if not e.block_sizes]
    targets = list(dev_profile.targets.order_by("order").values_list("key", flat=True))
    pairs, refused = self_check(trainee_account, dev_profile, exercises, targets)
    verdicts = lessons_on_replays(dev_profile, pairs)
    # The exercises past the page cache (direct I/O, or mdtest's file operations), as
    # the replay: their order of targets must be the replay's too.
    broken = order_broken([p for p in pairs if not p.cached])

    path = write_results(
        "replay_self_check",
        {
            "measured_at": datetime.now(UTC).isoformat(),
            "replay_seconds": settings.REPLAY_SECONDS,
            "replay_max_bytes": settings.REPLAY_MAX_BYTES,
            "pairs": [
                {
                    "exercise": p.exercise,
                    "target": p.target,
                    "engines": p.engines,
                    "unit": p.unit,
                    "ratio": p.ratio,
                    "within": p.within,
                    "exercise_figure": p.exercise_figure,
                    "replay_figure": p.replay_figure,
                }
                for p in pairs
            ],  # fmt: skip
            "refused": refused,
            "lessons": [
                {"claim": v.claim.text, "fast": v.fast, "slow": v.slow, "holds": v.holds}
                for v in verdicts
            ],
            "order_broken": broken,
        },
    )
    print(f"\nreplay self-check ({path}):")
    print("exercise target   engines          exercise     replay unit    ratio")
    for p in pairs:
        print(p.line)
    within = sum(p.within for p in pairs)
    print(f"{within} of {len(pairs)} pairs within ±30 %; refused: {refused or 'none'}")
    for v in verdicts:
        print(f"lesson on the replays: {v.claim.text} {v.fast} against {v.slow}: {v.holds}")
    print("order broken (past the cache): " + ("; ".join(broken) or "nowhere"))
    assert all(v.holds for v in verdicts), [v.claim.text for v in verdicts if not v.holds]
    assert not broken, broken
