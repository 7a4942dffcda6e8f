"""The quota walk (local.py, through treewalk.py) runs with the right to read every
directory: what it counts must be the user's directory alone, however the user times a
swap, and whatever is mounted inside it; and it holds few descriptors open."""

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from exercises.quotas import local

MiB = 2**20


def usage(path: Path) -> local.DirectoryUsage:
    return local.directory_usage(str(path), max_entries=10_000, timeout=10)


def test_a_directory_swapped_for_a_link_after_the_listing_is_not_followed(
    tmp_path: Path, monkeypatch
) -> None:
    """The user lists as a directory `runs`, then, before the walk goes into it, moves it
    away and puts there a link to another user's tree. The swap is made at the walk's
    first touch of `runs` after its parent was listed, whichever call that is: an open
    relative to the parent (today's walk), or a listing by path (the walk before, which
    then counted the other user's megabytes)."""
    mine, victims = tmp_path / "ada", tmp_path / "bob"
    (mine / "runs").mkdir(parents=True)
    (mine / "runs" / "small.txt").write_bytes(b"x" * 100)
    victims.mkdir()
    (victims / "secret.bin").write_bytes(os.urandom(4 * MiB))
    swapped = []

    def swap() -> None:
        if not swapped:
            swapped.append(True)
            (mine / "runs").rename(mine / "moved-away")
            (mine / "runs").symlink_to(victims)

    real_open, real_scandir = os.open, os.scandir

    def opening(path, flags, mode=0o777, *, dir_fd=None):
        if path == "runs" and dir_fd is not None:
            swap()
        return real_open(path, flags, mode, dir_fd=dir_fd)

    def listing(path="."):
        if isinstance(path, str) and path == str(mine / "runs"):
            swap()
        return real_scandir(path)

    monkeypatch.setattr(os, "open", opening)
    monkeypatch.setattr(os, "scandir", listing)
    counted = usage(mine)
    monkeypatch.undo()

    assert swapped, "the walk never went into runs"
    assert counted.bytes_used < MiB  # the other user's 4 MiB are not counted
    assert counted.files == 1  # runs, listed before the swap; nothing below it


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs takes root")
def test_a_filesystem_mounted_inside_the_directory_is_not_counted(tmp_path: Path) -> None:
    """Subvolumes of the user's own filesystem count (test_subvolumes_live.py); another
    mount does not: it is not the target's space."""
    (tmp_path / "data").write_bytes(os.urandom(64 * 1024))
    mount = tmp_path / "mounted"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "h4-walk", str(mount)], check=True)
    try:
        (mount / "elsewhere.bin").write_bytes(os.urandom(8 * MiB))
        counted = usage(tmp_path)
    finally:
        subprocess.run(["umount", str(mount)], check=True)

    assert counted.files == 1 and counted.bytes_used < MiB


def walk_in_a_child(path: Path, descriptors: int) -> subprocess.CompletedProcess[str]:
    """local.py as the collector runs it, allowed at most `descriptors` open files."""

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (descriptors, descriptors))

    return subprocess.run(
        [sys.executable, "-I", "-S", local.__file__, str(path), "100000", "30"],
        preexec_fn=limited,  # the limit for the child alone
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_its_descriptors_grow_neither_with_width_nor_with_a_chains_depth(tmp_path: Path) -> None:
    wide = tmp_path / "wide"
    for i in range(300):
        (wide / f"d{i}" / "e").mkdir(parents=True)
    deep = tmp_path / "deep"
    (deep / "/".join(["d"] * 100)).mkdir(parents=True)

    # 600 directories, and 100 within each other, with 32 descriptors at most.
    for tree, directories in ((wide, 600), (deep, 100)):
        counted = walk_in_a_child(tree, 32)
        assert counted.returncode == 0, counted.stderr
        assert json.loads(counted.stdout)["files"] == directories
