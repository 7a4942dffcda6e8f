"""The global submission rate limit: a burst gets places in the coming seconds, one
wait each, instead of retrying in a loop."""

import contextlib
import time

import pytest
from django.core.cache import cache

from jobs import ratelimit
from jobs.handover import resubmit_stale, submit, submit_run, submit_runs
from tests.runs import make_run


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
    empty_limiter, trainee_account, disk_target, settings, monkeypatch
) -> None:
    settings.SUBMIT_LEASE_SECONDS = 0  # every queued run counts as stale at once
    run = make_run(trainee_account, disk_target)
    ratelimit.take_submit_slot()
    ratelimit.take_submit_slot()  # this second is full now
    enqueued = []
    monkeypatch.setattr("jobs.handover.submit_runs.delay", enqueued.extend)

    with pytest.raises(ratelimit.RateLimited):
        submit(run.pk)
    resubmit_stale()

    assert enqueued == []


@pytest.mark.django_db
def test_with_no_place_in_sight_the_task_looks_for_one_again_and_takes_none(
    empty_limiter, trainee_account, disk_target, monkeypatch
) -> None:
    """Every second in sight full: no place is taken, so the task must not go ahead
    as if it had one (the rate limit would be bypassed)."""
    monkeypatch.setattr(ratelimit, "MAX_SLOT_AHEAD_SECONDS", 2)
    for _ in range(4):  # 2 a second, for the 2 seconds in sight
        with contextlib.suppress(ratelimit.RateLimited):
            ratelimit.take_submit_slot()
    run = make_run(trainee_account, disk_target)
    retried = {}

    def retry(**options):
        retried.update(options)
        raise RuntimeError("retried")

    monkeypatch.setattr(submit_run, "retry", retry)
    with pytest.raises(RuntimeError, match="retried"):
        submit_run.run(run.pk)
    assert retried["kwargs"] == {"slot_taken": False} and retried["countdown"] == 60


@pytest.mark.django_db
def test_each_run_of_a_burst_gets_its_place_and_one_task_due_then(
    empty_limiter, trainee_account, disk_target, settings, monkeypatch
) -> None:
    """submit_runs, the one message of a click: the runs that have a place now are
    sent at once, the others due when their place is, each as having its place. None
    of them is enqueued again by the sync meanwhile."""
    settings.SUBMIT_LEASE_SECONDS = 0  # every queued run counts as stale at once
    runs = [make_run(trainee_account, disk_target) for _ in range(5)]
    sent = []
    monkeypatch.setattr(submit_run, "delay", lambda *a, **kw: sent.append((a, kw, 0)))
    monkeypatch.setattr(
        submit_run, "apply_async", lambda a, kw, countdown: sent.append((a, kw, countdown))
    )
    again = []
    monkeypatch.setattr(submit_runs, "delay", again.extend)

    submit_runs.run([run.pk for run in runs])
    resubmit_stale()

    assert [(args, kwargs) for args, kwargs, _ in sent] == [
        ((run.pk,), {"slot_taken": True}) for run in runs
    ]
    countdowns = [countdown for *_, countdown in sent]
    assert countdowns[:2] == [0, 0]  # two a second
    assert all(0 < c <= 1 for c in countdowns[2:4]) and 1 < countdowns[4] <= 2
    assert not {run.pk for run in runs[2:]} & set(again), "a run due later was sent again"


@pytest.mark.django_db
def test_a_burst_beyond_every_place_in_sight_looks_again_later_without_a_place(
    empty_limiter, trainee_account, disk_target, monkeypatch
) -> None:
    monkeypatch.setattr(ratelimit, "MAX_SLOT_AHEAD_SECONDS", 1)
    runs = [make_run(trainee_account, disk_target) for _ in range(3)]
    sent = []
    monkeypatch.setattr(submit_run, "delay", lambda *a, **kw: sent.append((a, kw, 0)))
    monkeypatch.setattr(
        submit_run, "apply_async", lambda a, kw, countdown: sent.append((a, kw, countdown))
    )

    submit_runs.run([run.pk for run in runs])

    assert sent[2] == ((runs[2].pk,), {"slot_taken": False}, 60.0)


@pytest.mark.django_db
def test_a_click_sends_one_message_for_all_its_runs(
    empty_limiter,
    client,
    trainee_account,
    dev_profile,
    monkeypatch,
    django_capture_on_commit_callbacks,
) -> None:
    messages = []
    monkeypatch.setattr(submit_runs, "delay", messages.append)
    client.force_login(trainee_account.user)

    with django_capture_on_commit_callbacks(execute=True):
        client.post("/lab/1a/runs", {"targets": ["home", "global", "scratch", "tmp"]})

    assert len(messages) == 1 and len(messages[0]) == 4
