"""The sync asks Slurm for the job changes since a time on Slurm's own clock: a
portal whose clock is ahead must not be told "nothing changed" while runs end."""

from collections.abc import Iterator
from datetime import timedelta

import httpx
import pytest
from django.core.cache import cache
from django.utils import timezone

from jobs import sync as sync_module
from jobs.models import RunStatus
from jobs.sync import SLURM_CLOCK_KEY, sync
from tests.jobs.recorded import FakeSlurmrestd, find
from tests.runs import make_run

pytestmark = pytest.mark.django_db

REC = find("25.11-v0.0.44")
SLURMS_LAST_CHANGE = int(REC.body("slurm-jobs")["last_update"]["number"])


@pytest.fixture
def slurmrestd(monkeypatch) -> Iterator[FakeSlurmrestd]:
    server = FakeSlurmrestd(REC)
    client = server.client()
    monkeypatch.setattr(sync_module, "get_client", lambda: client)
    cache.delete(SLURM_CLOCK_KEY)
    yield server
    cache.delete(SLURM_CLOCK_KEY)


@pytest.fixture
def portal_clock_ahead(monkeypatch) -> None:
    real_now = timezone.now
    monkeypatch.setattr(timezone, "now", lambda: real_now() + timedelta(seconds=10))


@pytest.fixture
def seconds_pass(monkeypatch):
    """Moves the sync's own stopwatch on (only differences of time.time are used)."""
    offset = [0.0]
    real_time = sync_module.time.time
    monkeypatch.setattr(sync_module.time, "time", lambda: real_time() + offset[0])

    def wait(seconds: float) -> None:
        offset[0] += seconds

    return wait


def asked(server: FakeSlurmrestd) -> int | None:
    """The update_time of the last job list the sync asked for."""
    jobs = [r for r in server.requests if r.url.path.endswith("/jobs")]
    value = jobs[-1].url.params.get("update_time")
    return int(value) if value is not None else None


def test_the_sync_asks_from_slurms_last_change_not_from_the_portals_clock(
    slurmrestd, portal_clock_ahead, seconds_pass, make_user, disk_target
) -> None:
    account = make_user("sl-clock1").cluster_account
    make_run(account, disk_target, status=RunStatus.RUNNING, slurm_job_id=987654321)

    sync()
    assert asked(slurmrestd) is None  # the first list is whole

    seconds_pass(1)
    sync()  # from the second of Slurm's last change: the whole list again
    assert asked(slurmrestd) == SLURMS_LAST_CHANGE
    sync()  # still: a change may have come in that second after the first list was read
    assert asked(slurmrestd) == SLURMS_LAST_CHANGE

    seconds_pass(1)
    sync()  # a whole list read two seconds after the first shows the same last change
    assert asked(slurmrestd) == SLURMS_LAST_CHANGE
    sync()  # so nothing came in its second: from now on, only what comes after it
    assert asked(slurmrestd) == SLURMS_LAST_CHANGE + 1


def test_a_new_last_change_is_asked_from_its_own_second_again(
    slurmrestd, seconds_pass, make_user, disk_target
) -> None:
    account = make_user("sl-clock2").cluster_account
    make_run(account, disk_target, status=RunStatus.RUNNING, slurm_job_id=987654322)
    for _ in range(3):  # as above: a whole list, the same one 2 s on, then after it
        sync()
        seconds_pass(2)
    assert asked(slurmrestd) == SLURMS_LAST_CHANGE + 1
    changed = dict(REC.body("slurm-jobs"), last_update={"set": True, "number": 1_800_000_000})
    slurmrestd.answer = lambda request: httpx.Response(200, json=changed)

    sync()  # asked after the last change; there was one: a whole list
    sync()
    assert asked(slurmrestd) == 1_800_000_000  # its own second: a change may share it
