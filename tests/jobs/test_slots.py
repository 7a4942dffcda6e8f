"""Waiting runs start by themselves, in order, as slots free up (jobs/slots.py): after
the sync sees a run end, at once after a cancel; never beyond a cap, whoever promotes
at the same moment; a cancel racing a promotion wins or loses whole."""

import threading
import time
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone

from exercises.catalogue.models import StorageTarget
from exercises.courses.models import Course
from jobs import slots
from jobs.admission import queue_waiting
from jobs.models import BenchmarkRun, RunStatus
from jobs.states import transition
from jobs.submission import cancel
from jobs.sync import sync
from portal.models import ClusterAccount
from tests.runs import make_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def account(make_user) -> ClusterAccount:
    return make_user("sl-trainee9").cluster_account


@pytest.fixture
def submitted(monkeypatch) -> list[int]:
    """The runs whose submission was enqueued (the broker stands aside)."""
    sent: list[int] = []
    monkeypatch.setattr("jobs.handover.submit_runs.delay", sent.extend)
    return sent


def runs(account: ClusterAccount, target: StorageTarget, *statuses: str, **fields):
    """Runs created one after the other, in the order given."""
    return [make_run(account, target, status=status, **fields) for status in statuses]


def statuses(account: ClusterAccount) -> list[str]:
    mine = BenchmarkRun.objects.filter(user=account.user).order_by("created_at", "pk")
    return list(mine.values_list("status", flat=True))


def test_the_sync_gives_an_ended_runs_slot_to_the_oldest_waiting_run(
    account, disk_target, settings, submitted, django_capture_on_commit_callbacks
) -> None:
    settings.MAX_ACTIVE_RUNS_PER_USER = 2
    going, other, *waiting = runs(
        account, disk_target, "running", "queued", "waiting", "waiting", "waiting"
    )
    assert transition(going.pk, RunStatus.COMPLETED)  # as apply_job does when Slurm says so

    with django_capture_on_commit_callbacks(execute=True):
        sync()

    assert statuses(account) == ["completed", "queued", "queued", "waiting", "waiting"]
    assert submitted == [waiting[0].pk]
    assert slots.waiting_places(account.user_id) == {waiting[1].pk: 1, waiting[2].pk: 2}


def test_nothing_moves_while_every_slot_is_taken(account, disk_target, settings, submitted) -> None:
    settings.MAX_ACTIVE_RUNS_PER_USER = 1
    settings.LOST_AFTER_SECONDS = 1
    long_ago = timezone.now() - timedelta(hours=1)
    runs(account, disk_target, "queued", "waiting", "waiting")
    BenchmarkRun.objects.filter(status="waiting").update(created_at=long_ago)

    sync()

    # Old waiting runs are neither lost nor resubmitted: they never were in Slurm.
    assert sorted(statuses(account)) == ["queued", "waiting", "waiting"]
    assert submitted == []


def test_a_course_holds_its_waiting_runs_to_its_own_cap(
    account, disk_target, settings, site
) -> None:
    settings.MAX_ACTIVE_RUNS_PER_USER = 8
    course = Course.objects.create(title="Storage 101", profile=site, max_active_runs=2)
    runs(account, disk_target, "running", course=course)
    runs(account, disk_target, "waiting", "waiting", course=course)
    runs(account, disk_target, "waiting")  # in no course

    queue_waiting(account.user_id)

    assert statuses(account) == ["running", "queued", "waiting", "queued"]


def test_cancelling_a_queued_run_starts_the_next_waiting_one_at_once(
    client: Client, account, disk_target, settings, submitted, django_capture_on_commit_callbacks
) -> None:
    settings.MAX_ACTIVE_RUNS_PER_USER = 1
    queued, waiting = runs(account, disk_target, "queued", "waiting")
    client.force_login(account.user)

    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/jobs/runs/{queued.key}/cancel")

    assert statuses(account) == ["cancelled", "queued"]
    assert submitted == [waiting.pk]


def test_the_owner_follows_and_cancels_a_waiting_run_which_never_reaches_slurm(
    client: Client, account, disk_target, settings, submitted
) -> None:
    settings.MAX_ACTIVE_RUNS_PER_USER = 1
    runs(account, disk_target, "running")
    (waiting,) = runs(account, disk_target, "waiting")
    client.force_login(account.user)

    page = client.get(f"/jobs/runs/{waiting.key}/").content.decode()
    assert "Waiting for a free slot" in page and 'hx-trigger="every 2s"' in page
    assert "Cancel this run" in page

    response = client.post(f"/jobs/runs/{waiting.key}/cancel", follow=True)

    waiting.refresh_from_db()
    assert (waiting.status, waiting.status_reason) == ("cancelled", "Cancelled before it started.")
    assert "being cancelled" in response.content.decode()
    assert submitted == [] and waiting.slurm_job_id is None


def test_another_user_cannot_cancel_a_waiting_run(
    client: Client, account, disk_target, make_user
) -> None:
    (waiting,) = runs(account, disk_target, "waiting")
    client.force_login(make_user())

    assert client.post(f"/jobs/runs/{waiting.key}/cancel").status_code == 404
    waiting.refresh_from_db()
    assert waiting.status == RunStatus.WAITING


@pytest.mark.django_db(transaction=True)
def test_a_cancel_landing_during_a_promotion_gives_the_slot_to_the_next_run(
    make_user, site, settings, monkeypatch
) -> None:
    """The owner cancels the oldest waiting run (in a request of its own) between the
    promoter's read and its UPDATE: the cancel wins, the next run takes the slot, and
    only one does (the cancel's own promotion waits for the promoter's lock)."""
    settings.MAX_ACTIVE_RUNS_PER_USER = 1
    monkeypatch.setattr("jobs.handover.submit_runs.delay", lambda run_ids: None)
    account = make_user("sl-trainee9").cluster_account
    target = StorageTarget.objects.create(
        profile=site, key="scratch", name="$SCRATCH", path_template="/srv/x/{user}"
    )
    first, second, third = runs(account, target, "waiting", "waiting", "waiting")
    real_transition = slots.transition_many
    cancels: list[threading.Thread] = []

    def owner_cancels() -> None:
        try:
            assert cancel(BenchmarkRun.objects.get(pk=first.pk))
        finally:
            connection.close()

    def cancel_lands_first(run_ids, to, **kwargs):
        if first.pk in run_ids and to == RunStatus.QUEUED and not cancels:
            cancels.append(threading.Thread(target=owner_cancels))
            cancels[0].start()
            for _ in range(100):  # its UPDATE commits; its promotion then waits
                if BenchmarkRun.objects.get(pk=first.pk).status == RunStatus.CANCELLED:
                    break
                time.sleep(0.05)
        return real_transition(run_ids, to, **kwargs)

    monkeypatch.setattr(slots, "transition_many", cancel_lands_first)

    promoted = queue_waiting(account.user_id)
    cancels[0].join(timeout=30)

    assert [run.pk for run in promoted] == [second.pk]
    assert statuses(account) == ["cancelled", "queued", "waiting"]


def test_a_promotion_landing_during_a_cancel_is_cancelled_all_the_same(
    account, disk_target, settings, submitted
) -> None:
    """The page showed the run waiting; it was queued before the cancel came: the
    cancel takes it back before Slurm, and its slot goes to the next one."""
    settings.MAX_ACTIVE_RUNS_PER_USER = 1
    first, second = runs(account, disk_target, "waiting", "waiting")
    queue_waiting(account.user_id)  # first is queued now; the page still says waiting

    assert cancel(first)

    assert statuses(account) == ["cancelled", "queued"]


@pytest.mark.django_db(transaction=True)
def test_promoters_at_once_never_pass_the_cap(make_user, site, settings, monkeypatch) -> None:
    """Four workers (the sync, cancels, a click) promote the same user's runs at the
    same moment, with two slots free: two runs start, not eight."""
    settings.MAX_ACTIVE_RUNS_PER_USER = 2
    monkeypatch.setattr("jobs.handover.submit_runs.delay", lambda run_ids: None)
    account = make_user("sl-trainee9").cluster_account
    target = StorageTarget.objects.create(
        profile=site, key="scratch", name="$SCRATCH", path_template="/srv/x/{user}"
    )
    runs(account, target, *["waiting"] * 6)
    line_up = threading.Barrier(4)
    promoted: list[int] = []

    def promote() -> None:
        try:
            line_up.wait()
            promoted.extend(run.pk for run in queue_waiting(account.user_id))
        finally:
            connection.close()

    workers = [threading.Thread(target=promote) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=30)

    assert len(promoted) == 2
    assert statuses(account) == ["queued", "queued"] + ["waiting"] * 4


def test_waiting_runs_of_a_login_without_cluster_account_fail_and_say_why(
    account, disk_target
) -> None:
    (waiting,) = runs(account, disk_target, "waiting")
    user_id = account.user_id
    account.delete()

    assert queue_waiting(user_id) == []

    waiting.refresh_from_db()
    assert waiting.status == RunStatus.FAILED
    assert "no longer has a cluster account" in waiting.status_reason
