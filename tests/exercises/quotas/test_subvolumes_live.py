"""A btrfs subvolume a user makes in their own directory on $PROJECT (any user may, no
privilege needed, and each has a device number of its own) is part of that directory:
the quota walk counts it, the scan (a Slurm job as the user) sees what fills it, and the
purge (the same kind of job) reaches the files in it."""

import os
import subprocess
import time
from pathlib import Path

import pytest

from exercises.quotas import scans
from exercises.quotas.collectors import collect_one
from exercises.quotas.models import StorageScan
from tests.conftest import DISK_ROOT
from tests.quotas import quota_of, source

MiB = 2**20
DAY = 86400

pytestmark = pytest.mark.django_db(transaction=True)


def as_user(name: str, *command: str) -> None:
    subprocess.run(["runuser", "-u", name, "--", *command], check=True, timeout=60)


def write_as(name: str, path: Path, size: int, *, accessed_days_ago: float = 0) -> None:
    """Random bytes (zstd stores them whole), written by the user, read that long ago."""
    as_user(name, "dd", "if=/dev/urandom", f"of={path}", f"bs={size}", "count=1",
            "iflag=fullblock", "status=none")  # fmt: skip
    os.utime(path, (time.time() - accessed_days_ago * DAY, os.stat(path).st_mtime))


def wait_for(scan: StorageScan, timeout: float = 120) -> StorageScan:
    deadline = time.monotonic() + timeout
    while scan.status == StorageScan.Status.SUBMITTED and time.monotonic() < deadline:
        time.sleep(1)
        scan.refresh_from_db()
        scans.follow(scan)
    return scan


@pytest.fixture
def subvolumes(make_cluster_username):
    """A cluster account whose $PROJECT holds a subvolume it made, and one inside that;
    both deleted after the test (its account's removal takes the rest)."""
    name = make_cluster_username()
    project = DISK_ROOT / "project" / name
    outer, inner = project / "hidden", project / "hidden" / "deeper"
    as_user(name, "btrfs", "subvolume", "create", str(outer))
    as_user(name, "btrfs", "subvolume", "create", str(inner))
    assert os.lstat(outer).st_dev != os.lstat(project).st_dev  # a device of its own
    yield name, project, outer, inner
    for subvolume in (inner, outer):
        subprocess.run(["btrfs", "subvolume", "delete", str(subvolume)], capture_output=True)


def test_a_subvolume_the_user_made_counts_in_the_quota_walk_and_the_scan(
    live_portal, subvolumes, make_user, dev_profile
) -> None:
    name, project, outer, inner = subvolumes
    user = make_user(name)
    write_as(name, outer / "kept.bin", 3 * MiB)
    write_as(name, inner / "more.bin", 2 * MiB)

    assert collect_one(source(dev_profile, "project"), user.cluster_account)
    quota = quota_of(user.cluster_account, "project")
    assert quota.known, quota.error
    assert quota.bytes_used >= 5 * MiB  # a few KiB before: the subvolumes were skipped
    assert quota.files_used == 4  # hidden/, kept.bin, hidden/deeper/, more.bin

    scan = wait_for(scans.start(user.cluster_account, list(dev_profile.targets.all())))

    assert scan.status == StorageScan.Status.DONE, scan.error
    walked = scan.found["project"]
    assert walked["state"] == "done" and walked["entries"] == 4
    assert walked["bytes"] >= 5 * MiB
    (hidden,) = [d for d in walked["dirs"] if d["path"] == "hidden"]
    assert hidden["bytes"] >= 5 * MiB and hidden["files"] == 3
    assert {c["path"] for c in hidden["children"]} == {"hidden/kept.bin", "hidden/deeper"}


def test_the_purge_reaches_the_files_in_a_subvolume(
    live_portal, subvolumes, make_user, dev_profile, settings
) -> None:
    name, project, outer, inner = subvolumes
    user = make_user(name)
    target = dev_profile.targets.get(key="project")
    target.purge_days, target.purge_by = 14, "access"
    target.save()
    settings.PURGE_TARGETS = ["project"]
    stale = [outer / "stale.bin", inner / "stale.bin"]
    for path in stale:
        write_as(name, path, MiB, accessed_days_ago=20)
    fresh = inner / "fresh.bin"
    write_as(name, fresh, MiB)

    purge = wait_for(scans.start(user.cluster_account, [target], StorageScan.Kind.PURGE))

    assert purge.status == StorageScan.Status.DONE, purge.error
    assert purge.found["project"]["files"] == 2  # 0 before: find -xdev stopped at hidden/
    assert purge.found["project"]["bytes"] >= 2 * MiB
    assert not any(path.exists() for path in stale)
    assert fresh.exists()
