"""The replay checks itself, short (tests/replay_check.py; every exercise on every
target in `make bench`): the logs of 1a and 2a, recorded by Darshan as the lab ran
them, replayed on $HOME, $GLOBAL and $TMPDIR right after each exercise ran there.
The replay measures what the exercise measures: each pair within ±30 %
(a pair outside is run again once: a single run can be disturbed), and the lessons of
1a and 2a hold on the replays' figures alone."""

import pytest
from django.conf import settings

from tests.replay_check import lessons_on_replays, self_check

pytestmark = [
    pytest.mark.alone("measures the dev cluster's targets against each other"),
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not settings.RUN_DARSHAN_RUNTIME, reason="the dev env names the runtime"),
]

EXERCISES = ["1a", "2a"]
TARGETS = ["home", "global", "tmp"]


def test_the_replays_of_1a_and_2a_measure_what_the_exercises_do(
    live_portal, dev_profile, trainee_account, settings, sync_loop
) -> None:
    settings.REPLAY_SECONDS = 2  # as the exercises
    # Counted per user id in Redis, which test databases reuse: not this test's limit.
    settings.RUN_DARSHAN_PER_HOUR = 10_000
    pairs, refused = self_check(trainee_account, dev_profile, EXERCISES, TARGETS)
    assert not refused
    for i, pair in enumerate(pairs):
        if not pair.within:  # once more, both runs
            again, _ = self_check(trainee_account, dev_profile, [pair.exercise], [pair.target])
            pairs[i] = again[0]
    print("\n" + "\n".join(p.line for p in pairs))

    assert [p for p in pairs if not p.within] == []
    verdicts = lessons_on_replays(dev_profile, pairs)
    assert len(verdicts) == 4  # 1a's two claims, 2a's two within these targets
    assert all(v.holds for v in verdicts), [(v.claim.text, v.fast, v.slow) for v in verdicts]
