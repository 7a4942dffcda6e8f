"""The global submission rate limit: a burst gets places in the coming seconds, one
wait each, instead of retrying in a loop."""

import contextlib
import time

import pytest
from django.core.cache import cache

from jobs import ratelimit
from jobs.submission import resubmit_stale, send_submission, submit, submit_run
from tests.runs import make_run

pytestmark = pytest.mark.live  # slurmrestd / Redis of the dev cluster


@pytest.fixture
def empty_limiter(settings, monkeypatch):
    settings.SLURM_SUBMIT_RATE = 2
    now = int(time.time()) + 0.25
    monkeypatch.setattr(ratelimit.time, "time", lambda: now)  # no second boundary mid-test
    keys = [f"jobs:submits:{int(now) + i}" for i in range(-1, 30)]
    cache.delete_many([*keys, ratelimit.SUBMIT_FRONTIER_KEY])
    yield
    # Full seconds left behind would hold up the next tests' submissions.
    cache.delete_many([*keys, ratelimit.SUBMIT_FRONTIER_KEY])


def test_a_burst_is_spread_over_the_next_seconds(empty_limiter) -> None:
    delays = []
    for _ in range(7):
        try:
            ratelimit.take_submit_slot()
            delays.append(0.0)
        except ratelimit.RateLimited as e:
            delays.append(e.delay)

    # Two a second: 2 now, then 2 in each of the next seconds.
    assert delays[:2] == [0.0, 0.0]
    assert all(0 < d <= 1 for d in delays[2:4])
    assert all(1 < d <= 2 for d in delays[4:6])
    assert 2 < delays[6] <= 3


@pytest.mark.django_db
def test_a_run_waiting_for_its_place_is_not_enqueued_again(
    empty_limiter, trainee, disk_target, settings, monkeypatch
) -> None:
    settings.SUBMIT_LEASE_SECONDS = 0  # every queued run counts as stale at once
    run = make_run(trainee, disk_target)
    ratelimit.take_submit_slot()
    ratelimit.take_submit_slot()  # this second is full now
    enqueued = []
    monkeypatch.setattr("jobs.submission.submit_run.delay", enqueued.append)

    with pytest.raises(ratelimit.RateLimited):
        submit(run.pk)
    resubmit_stale()

    assert enqueued == []


@pytest.fixture
def sent(monkeypatch) -> list[tuple]:
    """The submit tasks sent: (run id, slot taken, countdown); the broker stands aside."""
    tasks: list[tuple] = []

    def apply_async(args, kwargs=None, countdown=None):
        tasks.append((args[0], (kwargs or {}).get("slot_taken", False), countdown))

    monkeypatch.setattr(submit_run, "apply_async", apply_async)
    monkeypatch.setattr(submit_run, "delay", lambda run_id: apply_async((run_id,)))
    return tasks


@pytest.mark.django_db
def test_a_burst_of_runs_is_sent_with_its_places_taken_so_each_task_runs_once(
    empty_limiter, sent, trainee, disk_target, settings
) -> None:
    """A class's clicks: each task is sent to come when its place is due, with the
    place taken, instead of running once to take it and again when it is due."""
    settings.SUBMIT_LEASE_SECONDS = 0  # every queued run counts as stale at once
    runs = [make_run(trainee, disk_target) for _ in range(5)]

    for run in runs:
        send_submission(run.pk)
    resubmit_stale()  # the sync sends no second task for a run whose task is coming

    assert [(run_id, slot_taken) for run_id, slot_taken, _ in sent] == [
        (run.pk, True) for run in runs
    ]
    countdowns = [countdown or 0 for _, _, countdown in sent]
    assert countdowns[:2] == [0, 0]  # two a second
    assert all(0 < c <= 1 for c in countdowns[2:4]) and 1 < countdowns[4] <= 2


@pytest.mark.django_db
def test_with_no_place_in_sight_the_task_looks_for_one_again_and_takes_none(
    empty_limiter, sent, trainee, disk_target, monkeypatch
) -> None:
    """Every second in sight full: no place is taken, so the task must not go ahead
    as if it had one (the rate limit would be bypassed)."""
    monkeypatch.setattr(ratelimit, "MAX_SLOT_AHEAD_SECONDS", 2)
    for _ in range(4):  # 2 a second, for the 2 seconds in sight
        with contextlib.suppress(ratelimit.RateLimited):
            ratelimit.take_submit_slot()
    run = make_run(trainee, disk_target)

    send_submission(run.pk)
    assert sent == [(run.pk, False, None)]  # sent to take its place itself

    retried = {}

    def retry(**options):
        retried.update(options)
        raise RuntimeError("retried")

    monkeypatch.setattr(submit_run, "retry", retry)
    with pytest.raises(RuntimeError, match="retried"):
        submit_run.run(run.pk)
    assert retried["kwargs"] == {"slot_taken": False} and retried["countdown"] == 60
