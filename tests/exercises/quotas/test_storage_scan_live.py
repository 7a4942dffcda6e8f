"""The storage scan and the dev cluster's purge, for real: a job as the user through
slurmrestd walks their directories on the dev cluster's nodes and posts its answer to
the live portal; `storage_outlook --scan` prints what it found; the purge job (the same
walk and the same rule, in the same program) removes exactly what the preview listed."""

import io
import json
import os
import pwd
import time
from pathlib import Path

import pytest
from django.core.management import call_command

from exercises.quotas import scans
from exercises.quotas.models import StorageScan
from tests.conftest import DISK_ROOT

DAY = 86400

pytestmark = pytest.mark.django_db(transaction=True)


def write(
    path: Path, size: int, *, owner: str, accessed_days_ago: float = 0, modified_days_ago: float = 0
) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(os.urandom(size))
    user = pwd.getpwnam(owner)
    for p in (path, *[q for q in path.parents if DISK_ROOT / "scratch" / owner in q.parents]):
        os.chown(p, user.pw_uid, user.pw_gid)
    now = time.time()
    os.utime(path, (now - accessed_days_ago * DAY, now - modified_days_ago * DAY))


def outlook(username: str, *more: str) -> dict:
    out = io.StringIO()
    call_command("storage_outlook", "--user", username, "--json", *more, stdout=out)
    return json.loads(out.getvalue())


def wait_for(scan: StorageScan, timeout: float = 120) -> StorageScan:
    deadline = time.monotonic() + timeout
    while scan.status == StorageScan.Status.SUBMITTED and time.monotonic() < deadline:
        time.sleep(1)
        scan.refresh_from_db()
        scans.follow(scan)
    return scan


def test_the_purge_preview_lists_what_the_dev_purge_removes(
    live_portal, make_cluster_username, make_user, dev_profile, settings
) -> None:
    settings.PURGE_TARGETS = ["scratch"]
    user = make_user(make_cluster_username())
    name = user.cluster_account.username
    scratch = DISK_ROOT / "scratch" / name
    # $SCRATCH's policy (dev.toml): files not accessed for 14 days are removed.
    old = [scratch / "run1" / f"old{i}.dat" for i in range(4)] + [scratch / "stale.log"]
    for i, path in enumerate(old):
        write(path, (i + 1) * 64 * 1024, owner=name, accessed_days_ago=20, modified_days_ago=20)
    fresh = [scratch / "run2" / f"new{i}.dat" for i in range(4)]
    for path in fresh:
        write(path, 256 * 1024, owner=name)
    # Written long ago but read yesterday: an access purge keeps it.
    read_lately = scratch / "run1" / "reference.fa"
    write(read_lately, 32 * 1024, owner=name, accessed_days_ago=1, modified_days_ago=40)
    # Due in about 2 days: in the 3-day window, not in the 1-day one.
    soon = scratch / "run2" / "soon.dat"
    write(soon, 16 * 1024, owner=name, accessed_days_ago=12, modified_days_ago=12)
    # A link to an old file elsewhere is not followed, and not purged.
    os.symlink(old[0], scratch / "link-to-old")

    found = outlook(user.username, "--scan")

    scanned = {t["target"]: t for t in found["targets"]}["scratch"]
    due = scanned["purge_due"]
    assert due["now"]["files"] == 5
    assert due["now"]["bytes"] >= sum((i + 1) * 64 * 1024 for i in range(5))
    assert due["within_1_days"]["files"] == 5
    assert due["within_3_days"]["files"] == 6 and due["within_7_days"]["files"] == 6
    listed = set(due["paths"])
    assert listed == {str(p) for p in [*old, soon]}  # soonest first, the due now among them
    assert due["paths"][-1] == str(soon)
    assert "5 of them are due now" in scanned["purge_says"]
    largest = {d["path"]: d for d in scanned["largest_dirs"]}
    assert largest[str(scratch / "run2")]["files"] == 5
    assert largest[str(scratch / "run2")]["bytes"] >= 4 * 256 * 1024
    assert scanned["scan_note"] == ""
    # A target with no purge says so: null, not zeros.
    home = {t["target"]: t for t in found["targets"]}["home"]
    assert home["purge_due"] is None and home["largest_dirs"] is not None

    purge = wait_for(scans.start(user.cluster_account, list(dev_profile.targets.all()), "purge"))

    assert purge.status == StorageScan.Status.DONE, purge.error
    assert purge.found["scratch"]["files"] == 5
    due_now = {str(p) for p in old}
    left = {str(p) for p in scratch.rglob("*") if p.is_file() or p.is_symlink()}
    assert not due_now & left  # every file the preview said is due now is gone
    assert left == {str(p) for p in [*fresh, read_lately, soon, scratch / "link-to-old"]}
    # And a scan after it finds nothing due now.
    again = {t["target"]: t for t in outlook(user.username, "--scan")["targets"]}
    assert again["scratch"]["purge_due"]["now"]["files"] == 0


def test_a_second_click_gets_the_same_scan_and_a_refusal_says_why(
    live_portal, make_cluster_username, make_user, dev_profile, settings
) -> None:
    account = make_user(make_cluster_username()).cluster_account
    targets = list(dev_profile.targets.all())

    first = scans.start(account, targets)
    again = scans.start(account, targets)  # a double click, while it goes or just after

    assert again == first and StorageScan.objects.filter(account=account).count() == 1
    assert wait_for(first).status == StorageScan.Status.DONE
    assert set(first.found) == {"home", "global", "scratch", "tmp", "binfs", "work", "project"}

    settings.SLURM_PARTITION = "no-such-partition"
    refused = wait_for(scans.start(account, targets, again=True))

    assert refused.status == StorageScan.Status.FAILED
    assert refused.error.startswith("Slurm did not take the job:")
