"""A copy of the repository alone, in a directory with nothing beside it (no
`../shared`), finds every source its dev cluster builds: the build scripts take
Darshan's and IOR's sources from docker/vendor/ (a build they already made is kept,
so this costs seconds; the scripts hash the source they found)."""

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def lone_clone(tmp_path: Path) -> Path:
    """The repository's tracked files as they are now, alone in a new directory."""
    names = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.split(b"\0")
    clone = tmp_path / "site" / "storagelab"
    for name in filter(None, names):
        source = ROOT / name.decode()
        if source.is_file():
            (clone / name.decode()).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, clone / name.decode())
    assert not (clone.parent.parent / "shared").exists()
    return clone


def built_prefix(prefix: Path, source: Path, *programs: str) -> dict[str, str]:
    """A prefix as a build of `source` leaves it: the scripts keep it, building
    nothing, exactly when the source they find hashes the same."""
    for program in programs:
        (prefix / program).parent.mkdir(parents=True, exist_ok=True)
        (prefix / program).write_text("#!/bin/sh\n")
        (prefix / program).chmod(0o755)
    (prefix / ".source.sha256").write_text(hashlib.sha256(source.read_bytes()).hexdigest())
    # The environment of a user who names no source of their own.
    return {k: v for k, v in os.environ.items() if k not in ("DARSHAN_SOURCE", "IOR_SOURCE")}


def test_a_lone_clone_finds_darshans_source_in_the_repository(
    lone_clone: Path, tmp_path: Path
) -> None:
    prefix = tmp_path / "darshan"
    source = lone_clone / "docker" / "vendor" / "darshan-45bcba8.tar.gz"
    env = built_prefix(prefix, source, "lib/libdarshan.so")
    done = subprocess.run(
        ["bash", "docker/darshan/build.sh"],
        cwd=lone_clone,
        env={**env, "DARSHAN_PREFIX": str(prefix)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert "building" not in done.stdout + done.stderr  # it kept the build: same source


def test_a_lone_clone_finds_iors_source_in_the_repository(lone_clone: Path, tmp_path: Path) -> None:
    prefix = tmp_path / "ior"
    source = lone_clone / "docker" / "vendor" / "ior-5fcf0ba.tar.gz"
    env = built_prefix(prefix, source, "bin/ior", "bin/mdtest")
    done = subprocess.run(
        ["bash", "docker/slurm/ior.sh"],
        cwd=lone_clone,
        env={**env, "IOR_PREFIX": str(prefix), "IOR_LINK_DIR": str(tmp_path / "bin")},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "bin" / "ior").resolve() == prefix / "bin" / "ior"
