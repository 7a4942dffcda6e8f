"""Collecting usage for real: the local collector walks real directories of the dev
cluster (also after a real benchmark job), the quota tools run as commands (stand-ins on
PATH print the documented output), and a tool that is missing, fails, hangs or talks
nonsense leaves "unknown" with the reason, never a zero."""

import io
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from django.core.management import call_command

from exercises.quotas.collectors import collect_all, collect_one
from exercises.quotas.models import Quota
from exercises.quotas.tasks import collect_quotas
from jobs.submission import start_run
from portal.models import ClusterAccount
from portal.units import MiB
from tests.conftest import DISK_ROOT, ROOT
from tests.quotas import LFS_OUTPUT, quota_of, quota_worker, source, stand_in_tools
from tests.runs import follow

TMPFS_ROOT = Path(os.getenv("STORAGELAB_TMPFS_ROOT", "/dev/shm/storagelab"))


@pytest.fixture
def account(make_cluster_username, make_user, dev_profile) -> ClusterAccount:
    return make_user(make_cluster_username()).cluster_account


def write(path: Path, size: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as f:
        f.write(os.urandom(size))  # random: nothing a filesystem could compress away


# --- the local collector -----------------------------------------------------------------------


def test_the_local_collector_counts_what_a_users_directory_holds(account, dev_profile) -> None:
    scratch = DISK_ROOT / "scratch" / account.username
    write(scratch / "input.dat", 3 * MiB)
    write(scratch / "results" / "a.csv", 100 * 1024)
    os.link(scratch / "input.dat", scratch / "results" / "same-input.dat")  # counted once
    os.symlink("/usr", scratch / "usr")  # not followed

    assert collect_one(source(dev_profile, "scratch"), account)

    quota = quota_of(account, "scratch")
    assert quota.known and quota.collector == "local"
    assert 3 * MiB + 100 * 1024 <= quota.bytes_used < 3 * MiB + 200 * 1024
    assert quota.files_used == 5  # input.dat, results/, a.csv, the hard link, the symlink
    assert quota.bytes_hard == 4 * 2**30  # dev.toml's quota_bytes for $SCRATCH


def test_the_local_collector_counts_tmpfs_too(account, dev_profile) -> None:
    write(TMPFS_ROOT / account.username / "shm.bin", 2 * MiB)

    collect_all(dev_profile, [account], target_key="tmp")

    quota = quota_of(account, "tmp")
    assert quota.bytes_used == 2 * MiB and quota.files_used == 1
    assert quota.bytes_hard == 2 * 2**30


def test_a_missing_directory_is_unknown_not_empty(account, dev_profile) -> None:
    subprocess.run(["rm", "-rf", str(DISK_ROOT / "global" / account.username)], check=True)

    assert not collect_one(source(dev_profile, "global"), account)

    quota = quota_of(account, "global")
    assert quota.bytes_used is None and not quota.known
    assert f"global/{account.username} does not exist" in quota.error


@pytest.mark.django_db(transaction=True)
def test_a_real_benchmark_job_leaves_nothing_on_the_users_quota(
    live_portal, sync_loop, dev_profile, trainee_account
) -> None:
    """The job removes its run directory (the 64 MiB fio wrote) and, once the portal
    has its output, its Slurm output file: the collector counts nothing afterwards."""
    scratch = dev_profile.targets.get(key="scratch")
    directory = DISK_ROOT / "scratch" / trainee_account.username
    (directory / "notes.txt").write_text("a file of the user's own\n")
    collect_all(dev_profile, [trainee_account], target_key="scratch")
    before = quota_of(trainee_account, "scratch")
    assert before.files_used == 1 and before.bytes_used > 0
    exercise = dev_profile.exercises.get(key="1a")
    run = start_run(trainee_account, scratch, exercise.workload, time_limit_minutes=2)

    (run,) = follow(run)
    collect_all(dev_profile, [trainee_account], target_key="scratch")

    assert run.status == "completed" and run.result_received_at is not None
    assert [p.name for p in directory.iterdir()] == ["notes.txt"]
    after = quota_of(trainee_account, "scratch")
    assert (after.files_used, after.bytes_used) == (before.files_used, before.bytes_used)


@pytest.mark.django_db(transaction=True)
def test_quotas_are_collected_as_soon_as_celery_beat_starts(
    celery_worker_thread, account, tmp_path
) -> None:
    """Beat's own schedule would first collect one QUOTA_INTERVAL_SECONDS (600 s)
    after a fresh start: My storage would say "never collected" for ten minutes. The
    round goes to the quotas queue, which a worker of its own takes."""
    with quota_worker(tmp_path / "worker.log"):
        collected_after_beat_starts(account, tmp_path)

    assert quota_of(account, "scratch").bytes_used == 0


def collected_after_beat_starts(account: ClusterAccount, tmp_path: Path) -> None:
    beat = subprocess.Popen(
        [ROOT / ".venv/bin/celery", "-A", "portal", "beat", "--schedule", tmp_path / "schedule"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 30
        while not Quota.objects.filter(account=account, collected_at__isnull=False).exists():
            assert time.monotonic() < deadline, "beat started, and no quota was collected"
            assert beat.poll() is None, "celery beat did not start"
            time.sleep(0.5)
    finally:
        beat.terminate()
        beat.wait(timeout=30)


# --- quota tools as commands -------------------------------------------------------------------


@pytest.fixture
def tools(tmp_path, settings) -> Callable[[str, str], Path]:
    return stand_in_tools(tmp_path / "bin", settings)


def test_lfs_runs_as_an_argv_list_and_its_figures_are_stored(
    account, dev_profile, tools, tmp_path
) -> None:
    tools("lfs", f'printf "%s\\n" "$@" > {tmp_path}/argv\necho "{LFS_OUTPUT}"')

    assert collect_one(source(dev_profile, "scratch", "lustre", "/lustre/scratch"), account)

    argv = (tmp_path / "argv").read_text().split()
    assert argv == ["quota", "-q", "-u", account.username, "/lustre/scratch"]
    quota = quota_of(account, "scratch")
    assert (quota.bytes_used, quota.bytes_soft, quota.files_used) == (2**30, 4 * 2**30, 1200)
    assert quota.collector == "lustre" and quota.known


def test_a_missing_tool_leaves_the_figures_unknown(account, dev_profile, tools) -> None:
    assert not collect_one(source(dev_profile, "scratch", "lustre", "/lustre/scratch"), account)

    quota = quota_of(account, "scratch")
    assert quota.bytes_used is None and quota.collected_at is None
    assert quota.error.startswith("lfs is not installed on ")


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ('echo "lfs: quotactl failed: No such device" >&2; exit 2', "lfs failed (exit status 2)"),
        ("sleep 30 & sleep 30", "lfs gave no answer within 0.5 s"),
        ('echo "<html>Service unavailable</html>"', "could not read the output of lfs"),
    ],
)
def test_a_failing_tool_keeps_the_last_good_figures_and_says_why(
    account, dev_profile, tools, settings, body: str, error: str
) -> None:
    settings.QUOTA_COMMAND_TIMEOUT = 0.5
    lustre = source(dev_profile, "scratch", "lustre", "/lustre/scratch")
    tool = tools("lfs", f'echo "{LFS_OUTPUT}"')
    collect_one(lustre, account)
    good = quota_of(account, "scratch")
    tool.write_text(f"#!/bin/sh\n{body}\n")

    started = time.monotonic()
    assert not collect_one(lustre, account)

    assert time.monotonic() - started < 3
    quota = quota_of(account, "scratch")
    assert error in quota.error and not quota.known
    assert (quota.bytes_used, quota.collected_at) == (good.bytes_used, good.collected_at)
    assert quota.attempted_at > good.attempted_at


def test_an_invalid_account_name_never_reaches_a_command(
    dev_profile, make_user, tools, tmp_path
) -> None:
    tools("lfs", f"touch {tmp_path}/ran")
    user = make_user()
    bad = ClusterAccount.objects.create(user=user, username="x;touch /tmp/pwned")

    assert not collect_one(source(dev_profile, "scratch", "lustre", "/lustre/scratch"), bad)

    assert "not a valid cluster account name" in quota_of(bad, "scratch").error
    assert not (tmp_path / "ran").exists()


def test_beegfs8_is_asked_about_the_numeric_uid(account, dev_profile, tools, tmp_path) -> None:
    uid = int(subprocess.run(["id", "-u", account.username], capture_output=True).stdout)
    row = (
        f'{{"name":"{account.username}","id":{uid},"type":"user","pool":"default",'
        '"space":"4096/1073741824","inode":"2/∞"}'
    )
    tools("beegfs", f"printf '%s\\n' \"$@\" > {tmp_path}/argv\necho '{row}'")

    assert collect_one(source(dev_profile, "global", "beegfs8"), account)

    assert (tmp_path / "argv").read_text().split()[:5] == [
        "quota", "list-usage", "--uids", str(uid), "--raw"
    ]  # fmt: skip
    assert quota_of(account, "global").bytes_hard == 2**30


# --- the commands and the periodic task --------------------------------------------------------


def test_the_collect_quotas_command_reports_each_figure(account, dev_profile) -> None:
    write(DISK_ROOT / "global" / account.username / "notes.txt", 10 * 1024)
    out = io.StringIO()

    call_command("collect_quotas", account.username, "--target", "global", stdout=out)

    assert f"{account.username} on global: 12 KiB" in out.getvalue()
    assert "1 collected, 0 unknown in" in out.getvalue()


def test_the_periodic_task_collects_every_account_on_every_target(account, dev_profile) -> None:
    collect_quotas.apply()

    # Every target a collector measures ($WORK, which this host does not mount, has none).
    measured = dev_profile.targets.filter(quota_source__collector__gt="")
    assert measured.count() == 6
    assert Quota.objects.filter(account=account).count() == 6
    assert all(q.known for q in Quota.objects.filter(account=account))
