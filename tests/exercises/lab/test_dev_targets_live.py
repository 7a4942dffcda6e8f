"""The dev site's targets are what their pages say (docker/slurm/storage.sh and
account.sh set them up): $HOME a sync-mounted, throttled ext4 image, $GLOBAL an ext4
image straight to the VM's disk with the seeks of a few disks, $SCRATCH an ext4 image
without a journal mounted nobarrier, $TMPDIR a
size-limited tmpfs per account. And a run too big for $TMPDIR fails, saying why."""

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.urls import reverse

from exercises.catalogue.models import SiteProfile, StorageTarget
from jobs.models import RunStatus
from jobs.submission import start_run
from tests.conftest import ACCOUNT_SCRIPT, NODES_ACCOUNT_SCRIPT
from tests.names import unique_name
from tests.runs import follow

pytestmark = pytest.mark.django_db(transaction=True)

BLKIO = Path("/sys/fs/cgroup/blkio")
MiB = 2**20


def mount_of(directory: str) -> dict[str, str]:
    """The mount that holds DIRECTORY, as findmnt reports it."""
    out = subprocess.run(
        ["findmnt", "-no", "SOURCE,FSTYPE,OPTIONS,TARGET", "--target", directory],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return dict(zip(["source", "fstype", "options", "target"], out, strict=True))


def loop_field(device: str, field: str) -> str:
    return subprocess.run(
        ["losetup", "-nO", field, device], capture_output=True, text=True, check=True
    ).stdout.strip()


def target(profile: SiteProfile, key: str) -> StorageTarget:
    return profile.targets.get(key=key)


@pytest.fixture
def needs_loop_devices() -> None:
    # storage.sh falls back to plain directories (and says so) without them.
    if not Path("/dev/loop-control").exists():
        pytest.skip("this kernel has no loop devices: the dev targets are plain directories")


def test_home_is_a_sync_mounted_image_capped_as_its_page_says(
    needs_loop_devices, dev_profile, cluster_username
) -> None:
    home = target(dev_profile, "home")
    mount = mount_of(home.directory_for(cluster_username))

    assert "sync,dirsync" in home.summary
    assert mount["fstype"] == "ext4" and mount["target"] == "/srv/storagelab/home"
    assert {"sync", "dirsync"} <= set(mount["options"].split(","))
    assert mount["source"].startswith("/dev/loop")
    assert loop_field(mount["source"], "BACK-FILE").endswith("/storage/home.img")
    assert loop_field(mount["source"], "DIO") == "1"  # no second cache under sync
    # The cap the page names, on this loop device, both ways.
    cap = int(re.search(r"(\d+) MiB/s", home.filesystem).group(1))
    if not (BLKIO / "blkio.throttle.write_bps_device").exists():
        pytest.skip("no cgroup v1 blkio throttle here: storage.sh leaves $HOME uncapped")
    device = subprocess.run(
        ["lsblk", "-dno", "MAJ:MIN", mount["source"]], capture_output=True, text=True, check=True
    ).stdout.strip()
    for direction in ("write", "read"):
        rules = (BLKIO / f"blkio.throttle.{direction}_bps_device").read_text().split("\n")
        assert f"{device} {cap * MiB}" in rules, direction


def device_of(loop: str) -> str:
    return subprocess.run(
        ["lsblk", "-dno", "MAJ:MIN", loop], capture_output=True, text=True, check=True
    ).stdout.strip()


def cap_of(loop: str, what: str = "iops") -> dict[str, str]:
    """What LOOP may take a second (what: iops or bps), by direction, as the blkio
    throttle has it."""
    if not (BLKIO / f"blkio.throttle.write_{what}_device").exists():
        pytest.skip("no cgroup v1 blkio throttle here: storage.sh leaves the targets uncapped")
    device = device_of(loop)
    caps = {}
    for direction in ("write", "read"):
        for rule in (BLKIO / f"blkio.throttle.{direction}_{what}_device").read_text().split("\n"):
            if rule.startswith(f"{device} "):
                caps[direction] = rule.split()[1]
    return caps


def test_global_is_an_image_straight_to_the_disk_capped_in_requests_as_its_page_says(
    needs_loop_devices, dev_profile, cluster_username
) -> None:
    global_ = target(dev_profile, "global")
    mount = mount_of(global_.directory_for(cluster_username))

    assert mount["fstype"] == "ext4" and mount["target"] == "/srv/storagelab/global"
    assert loop_field(mount["source"], "BACK-FILE").endswith("/storage/global.img")
    assert loop_field(mount["source"], "DIO") == "1"  # writes reach the disk
    cap = re.search(r"([\d,]+) requests/s", global_.filesystem).group(1).replace(",", "")
    mib_s = int(re.search(r"(\d+) MiB/s", global_.filesystem).group(1))
    assert f"at most {int(cap)} requests a second" in global_.summary
    assert f"at most {mib_s} MiB a second" in global_.summary
    assert cap_of(mount["source"]) == {"write": cap, "read": cap}
    assert cap_of(mount["source"], "bps") == {"write": str(mib_s * MiB), "read": str(mib_s * MiB)}


def test_scratch_is_an_image_without_journal_mounted_nobarrier(
    needs_loop_devices, dev_profile, cluster_username
) -> None:
    scratch = target(dev_profile, "scratch")
    mount = mount_of(scratch.directory_for(cluster_username))

    assert scratch.filesystem.startswith("ext4, no journal, nobarrier")
    assert mount["fstype"] == "ext4" and mount["target"] == "/srv/storagelab/scratch"
    assert "nobarrier" in mount["options"].split(",")
    features = subprocess.run(
        ["dumpe2fs", "-h", mount["source"]], capture_output=True, text=True, check=True
    ).stdout
    assert "has_journal" not in features
    assert loop_field(mount["source"], "BACK-FILE").endswith("/storage/scratch.img")
    assert loop_field(mount["source"], "DIO") == "0"  # writes land in the page cache
    assert "at most 2,000 requests and 1,000 MiB a second" in scratch.summary
    assert cap_of(mount["source"]) == {"write": "2000", "read": "2000"}
    assert cap_of(mount["source"], "bps") == {"write": str(1000 * MiB), "read": str(1000 * MiB)}


def test_tmpdir_is_a_tmpfs_of_the_accounts_own_as_big_as_its_quota(
    dev_profile, cluster_username
) -> None:
    tmp = target(dev_profile, "tmp")
    directory = tmp.directory_for(cluster_username)
    mount = mount_of(directory)

    assert mount["fstype"] == "tmpfs" and mount["target"] == directory
    assert f"size={tmp.quota_bytes // 1024}k" in mount["options"].split(",")
    assert "2 GiB" in tmp.size and tmp.quota_bytes == 2 * 2**30


@pytest.fixture
def small_tmpdir_account() -> Iterator[str]:
    """An account whose $TMPDIR tmpfs holds 8 MiB, less than exercise 1a writes."""
    name = unique_name("slt")
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "STORAGELAB_TMPDIR_SIZE": "8m"}
    subprocess.run([str(ACCOUNT_SCRIPT), "add", name], check=True, env=env)
    subprocess.run([str(NODES_ACCOUNT_SCRIPT), name], check=True, timeout=60)
    yield name
    subprocess.run([str(ACCOUNT_SCRIPT), "remove", name], check=False)


def test_a_run_that_does_not_fit_in_tmpdir_fails_and_its_page_says_why(
    live_portal, dev_profile, small_tmpdir_account, make_user, client
) -> None:
    user = make_user(small_tmpdir_account)
    exercise = dev_profile.exercises.get(key="1a")
    assert exercise.workload.size_per_process == 64 * MiB
    run = start_run(
        user.cluster_account, target(dev_profile, "tmp"), exercise.workload, time_limit_minutes=2
    )

    (run,) = follow(run)

    assert run.status == RunStatus.FAILED
    client.force_login(user)
    page = client.get(reverse("jobs:run-detail", args=[run.key])).content.decode()
    # fio's own words, shown as the reason: "fio job 'write' failed: No space left on
    # device (error 28)".
    assert "No space left on device" in page
