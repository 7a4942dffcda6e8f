"""A quota round survives its faults: an unexpected error costs one account on one target
its figures, never the round; a tool or walk stuck on a hung mount costs the round about
one timeout, however many accounts wait behind it; and the round runs on a queue of its
own, so a stuck one never holds up the submission of runs."""

import json
import os
import signal
import sys
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

import pytest

from exercises.catalogue.models import QuotaCollector
from exercises.quotas import collectors, local
from exercises.quotas.collectors import collect_all
from exercises.quotas.tasks import collect_quotas
from jobs.models import BenchmarkRun, RunStatus
from jobs.submission import cancel, start_run
from portal.celery import app
from portal.models import ClusterAccount
from tests.names import unique_name
from tests.quotas import LFS_OUTPUT, quota_of, quota_worker, source, stand_in_tools
from tests.runs import small_workload

pytestmark = pytest.mark.django_db

LUSTRE = "/lustre/scratch"


@pytest.fixture
def tools(tmp_path, settings) -> Callable[[str, str], Path]:
    return stand_in_tools(tmp_path / "bin", settings)


@pytest.fixture
def accounts(make_user, dev_profile) -> Callable[[int], list[ClusterAccount]]:
    """Cluster accounts the portal knows; a quota tool asked about them needs no Unix
    account, so a round over many of them costs no `useradd`."""
    return lambda n: [make_user(unique_name("slt")).cluster_account for _ in range(n)]


# --- an unexpected error costs one account its figures, not the round ------------------------

# `lfs` printing, for one account only, a figure Python refuses to read (a parser bug:
# ValueError, not QuotaParseError) or one PostgreSQL refuses to store (bigint out of range).
UNREADABLE = LFS_OUTPUT.replace("1048576", "1" * 5000, 1)
UNSTORABLE = LFS_OUTPUT.replace("1048576", "9" * 20, 1)


@pytest.mark.parametrize("bad_output", [UNREADABLE, UNSTORABLE], ids=["parser", "database"])
def test_an_unexpected_error_costs_only_that_account_its_figures(
    accounts, dev_profile, tools, bad_output: str
) -> None:
    bad, *good = accounts(3)
    tools("lfs", f'[ "$4" = {bad.username} ] && echo "{bad_output}" || echo "{LFS_OUTPUT}"')
    source(dev_profile, "scratch", QuotaCollector.LUSTRE, LUSTRE)

    summary = collect_all(dev_profile, [bad, *good], target_key="scratch")

    assert (summary.collected, summary.failed) == (2, 1)
    assert all(quota_of(a, "scratch").bytes_used == 2**30 for a in good)
    quota = quota_of(bad, "scratch")
    assert not quota.known and quota.bytes_used is None
    assert "failed unexpectedly" in quota.error and "worker log" in quota.error


def test_an_unstorable_ondemand_entry_costs_only_that_account_its_figures(
    accounts, dev_profile, tmp_path, settings
) -> None:
    bad, good = accounts(2)
    source(dev_profile, "home", QuotaCollector.ONDEMAND)
    home = dev_profile.targets.get(key="home")
    quotas = [
        {"user": a.username, "path": home.directory_for(a.username), "total_block_usage": used}
        for a, used in ((bad, 10**20), (good, 1024))
    ]
    ood = tmp_path / "quota.json"
    ood.write_text(json.dumps({"version": 1, "timestamp": time.time(), "quotas": quotas}))
    settings.QUOTA_ONDEMAND_FILES = [str(ood)]

    summary = collect_all(dev_profile, [bad, good], target_key="home")

    assert (summary.collected, summary.failed) == (1, 1)
    assert quota_of(good, "home").bytes_used == 2**20
    assert "failed unexpectedly" in quota_of(bad, "home").error


# --- a hung mount costs the round about one timeout ---------------------------------------------


def test_a_hung_tool_costs_the_round_one_timeout_not_one_per_account(
    accounts, dev_profile, tools, settings
) -> None:
    settings.QUOTA_COMMAND_TIMEOUT = 1
    first, *others = accounts(20)
    tools("lfs", "exec sleep 30")
    source(dev_profile, "scratch", QuotaCollector.LUSTRE, LUSTRE)

    started = time.monotonic()
    summary = collect_all(dev_profile, [first, *others], target_key="scratch")

    assert time.monotonic() - started < 5  # 20 accounts, 1 s each before
    assert (summary.collected, summary.failed) == (0, 20)
    assert "lfs gave no answer within 1 s" in quota_of(first, "scratch").error
    skipped = f"skipped: lfs hung on this round for {first.username}"
    assert all(quota_of(a, "scratch").error.startswith(skipped) for a in others)
    assert any("lfs hung" in note for note in summary.notes)


def test_a_tool_whose_helper_keeps_its_output_open_is_left_behind_in_bounded_time(
    accounts, dev_profile, tools, settings, tmp_path
) -> None:
    """Killed with its process group, the tool leaves a helper in a session of its own
    holding its output open: waiting for the end of that output has no bound (as a tool
    stuck in the kernel, which SIGKILL cannot end, has none)."""
    settings.QUOTA_COMMAND_TIMEOUT = 1
    helper = tmp_path / "helper.pid"
    tools("lfs", f"setsid sleep 20 &\necho $! > {helper}\nexec sleep 30")
    source(dev_profile, "scratch", QuotaCollector.LUSTRE, LUSTRE)
    (account,) = accounts(1)

    started = time.monotonic()
    try:
        collect_all(dev_profile, [account], target_key="scratch")
        elapsed = time.monotonic() - started
    finally:
        with suppress(ProcessLookupError, ValueError, FileNotFoundError):
            os.kill(int(helper.read_text()), signal.SIGKILL)

    assert elapsed < 5  # 20 s (the helper's life) before
    assert "lfs gave no answer within 1 s" in quota_of(account, "scratch").error


# The real walk (local.py), in a child whose stat and directory listing block as they
# do on a hung mount: no filesystem here can be made to hang, so the child is told to.
BLOCKING_WALK = (
    "import os, runpy, sys, time\n"
    "os.lstat = os.scandir = lambda *args, **kwargs: time.sleep(60)\n"
    "sys.argv = sys.argv[1:]\n"
    "runpy.run_path(sys.argv[0], run_name='__main__')\n"
)


def test_a_local_walk_stuck_on_a_hung_mount_is_bounded(
    accounts, dev_profile, settings, monkeypatch
) -> None:
    settings.QUOTA_COMMAND_TIMEOUT = 1
    # raising=False: the collector without a walk child has no WALK to replace.
    walk = [sys.executable, "-I", "-S", "-c", BLOCKING_WALK, local.__file__]
    monkeypatch.setattr(collectors, "WALK", walk, raising=False)
    first, *others = accounts(3)

    started = time.monotonic()
    summary = collect_all(dev_profile, [first, *others], target_key="global")

    assert time.monotonic() - started < 6
    assert (summary.collected, summary.failed) == (0, 3)
    assert "gave no answer within" in quota_of(first, "global").error
    assert all("hung on this round" in quota_of(a, "global").error for a in others)


# --- a queue of its own ----------------------------------------------------------------------


def test_quota_rounds_go_to_their_own_queue_and_runs_to_the_default_one() -> None:
    def queue(task: str) -> str:
        return app.amqp.router.route({}, task)["queue"].name

    assert queue("exercises.tasks.collect_quotas") == "quotas"
    for task in ("jobs.tasks.submit_run", "jobs.tasks.sync_runs"):
        assert queue(task) == "celery"
    assert queue("jobs.tasks.ingest_result") == "results"  # a worker of its own too


@pytest.mark.django_db(transaction=True)
def test_a_quota_round_stuck_on_a_hung_mount_never_holds_up_a_submission(
    live_portal, dev_profile, trainee_account, tools, tmp_path, settings
) -> None:
    """The live worker of runs (the tests' worker, queue "celery") submits while the quota
    worker (a real one, queue "quotas") waits on a hung `lfs`."""
    lfs = tmp_path / "lfs.pid"
    tools("lfs", f"echo $$ > {lfs}\nexec sleep 30")
    source(dev_profile, "scratch", QuotaCollector.LUSTRE, LUSTRE)
    settings.QUOTA_COMMAND_TIMEOUT = 20  # also for the tests' worker, should it get the round
    run = None
    try:
        with quota_worker(
            tmp_path / "worker.log", QUOTA_TOOL_PATH=settings.QUOTA_TOOL_PATH,
            QUOTA_COMMAND_TIMEOUT="20",
        ):  # fmt: skip
            collect_quotas.delay()
            wait_until(lfs.exists, 20, "no quota worker ran lfs")
            target = dev_profile.targets.get(key="global")
            run = start_run(trainee_account, target, small_workload(), time_limit_minutes=2)
            wait_until(lambda: submitted(run.pk), 8, "the run was not submitted")
            assert Path(f"/proc/{lfs.read_text().strip()}").exists(), "lfs no longer hung"
    finally:
        with suppress(ProcessLookupError, ValueError, FileNotFoundError):
            os.kill(int(lfs.read_text()), signal.SIGKILL)
        if run is not None:
            run.refresh_from_db()
            cancel(run)


def submitted(run_id: int) -> bool:
    return BenchmarkRun.objects.get(pk=run_id).status != RunStatus.QUEUED


def wait_until(done: Callable[[], bool], seconds: float, failure: str) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, f"{failure} within {seconds:g} s"
        time.sleep(0.2)
