"""docker/slurm/account.sh, which makes the dev site's cluster accounts as root, follows
no link it did not make: root chowns and mounts in the directories it names, and one
of them (the tmpfs root, in /dev/shm) sits where every user may write."""

import os
import pwd
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cluster import as_user
from tests.names import unique_name

ROOT = Path(__file__).resolve().parents[1]
ACCOUNT_SCRIPT = ROOT / "docker" / "slurm" / "account.sh"


@pytest.fixture
def places(tmp_path: Path) -> Iterator[dict[str, str]]:
    """The script's roots, of this test's own: a disk root of root's, and a tmpfs root
    in /dev/shm, which another user may take first."""
    disk = tmp_path / "disk"
    disk.mkdir()
    tmpfs = Path("/dev/shm") / unique_name("slt-shm")
    yield {"STORAGELAB_DISK_ROOT": str(disk), "STORAGELAB_TMPFS_ROOT": str(tmpfs)}
    if tmpfs.is_symlink() or tmpfs.is_file():
        tmpfs.unlink()
    else:
        shutil.rmtree(tmpfs, ignore_errors=True)


def account_sh(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(ACCOUNT_SCRIPT), *argv],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("plant", ["link", "directory"])
def test_a_tmpfs_root_another_user_made_first_is_refused_and_nothing_is_done(
    plant: str, places: dict[str, str], cluster_username: str, tmp_path: Path
) -> None:
    victim = tmp_path / "victims-files"
    victim.mkdir(mode=0o755)
    before = victim.stat()
    tmpfs = places["STORAGELAB_TMPFS_ROOT"]
    if plant == "link":
        as_user(cluster_username, "ln", "-s", str(victim), tmpfs)
    else:
        as_user(cluster_username, "mkdir", "-m", "777", tmpfs)
    name = unique_name("slt")

    done = account_sh(places, "add", name)

    try:
        assert done.returncode != 0
        assert "not a directory only root writes to" in done.stderr
        assert (victim.stat().st_uid, victim.stat().st_mode) == (before.st_uid, before.st_mode)
        assert not list(victim.iterdir())  # no account directory made through the link
        with pytest.raises(KeyError):
            pwd.getpwnam(name)  # refused before the account was made
    finally:
        account_sh(places, "remove", name)


def test_accounts_are_made_in_roots_directories(places: dict[str, str]) -> None:
    name = unique_name("slt")
    try:
        done = account_sh(places, "add", name)
        assert done.returncode == 0, done.stderr
        uid = pwd.getpwnam(name).pw_uid
        for root in (f"{places['STORAGELAB_DISK_ROOT']}/scratch", places["STORAGELAB_TMPFS_ROOT"]):
            info = os.lstat(root)
            assert (info.st_uid, info.st_mode & 0o777) == (0, 0o755)
            mine = os.lstat(f"{root}/{name}")
            assert (mine.st_uid, mine.st_mode & 0o777) == (uid, 0o700)
    finally:
        account_sh(places, "remove", name)
