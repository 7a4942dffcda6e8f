"""A clone builds on its own: no script, Dockerfile, compose file or Makefile of the
repository names a path outside it (a site that clones the project has nothing beside
it), and what docker/vendor/ holds is what its README says, byte for byte."""

import hashlib
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENDOR = ROOT / "docker" / "vendor"

# Where a path is written that a build or a dev command follows.
BUILD_FILES = ("*.sh", "Makefile", "Dockerfile", "*.yaml", "*.yml", "*.in", ".ci/run")
# A path that starts at the repository's root, not at the file's own directory.
ROOT_VARIABLES = re.compile(r"\$\{?(STORAGELAB_ROOT|ROOT)\}?/?$")
# A word of a shell line, a Makefile or a compose file: what can hold a path.
WORD = re.compile(r"[^\s\"'`=(){};,|<>]+")
# Where outside a clone the sources once were.
OUTSIDE = re.compile(r"/work/|shared/vendor|\.\./shared\b")


def build_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "-z", *BUILD_FILES, *(f"**/{p}" for p in BUILD_FILES)],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    return sorted({ROOT / name.decode() for name in listed if name})


def escapes(text: str, where: Path) -> list[str]:
    """The words of `text` (a file in `where`) whose `..` climb above the repository:
    each resolved from the file's own directory (`$here/..`, `$(dirname "$0")/..`), or
    from the root for `$STORAGELAB_ROOT/..`."""
    found = []
    for line in text.splitlines():
        for word in WORD.findall(line):
            start = word.find("..")
            if start < 0 or "..." in word:
                continue
            base = [] if ROOT_VARIABLES.search(word[:start]) else list(where.parts)
            for part in word[start:].split("/"):
                if part == "..":
                    if not base:
                        found.append(word)
                        break
                    base.pop()
                elif part.startswith("$") or "*" in part:
                    break
                elif part not in ("", "."):
                    base.append(part)
    return found


def test_the_build_files_are_found() -> None:
    names = {path.relative_to(ROOT).as_posix() for path in build_files()}
    assert {"Makefile", "docker/Dockerfile", "docker/darshan/build.sh", ".ci/run"} <= names
    assert "docker/compose.yaml" in names and "docker/cluster/slurm.conf.in" in names


def test_no_build_file_names_a_path_outside_the_repository() -> None:
    outside = {}
    for path in build_files():
        text = path.read_text(errors="replace")
        where = path.parent.relative_to(ROOT)
        bad = escapes(text, where) + OUTSIDE.findall(text)
        if bad:
            outside[path.relative_to(ROOT).as_posix()] = bad
    assert outside == {}


def test_the_check_sees_a_climb_out_of_the_repository() -> None:
    darshan = Path("docker/darshan")
    # What build.sh read before its source moved in, and what it reads now.
    assert escapes("SOURCE=${DARSHAN_SOURCE:-$here/../../../shared/x.tar.gz}", darshan)
    assert not escapes("SOURCE=${DARSHAN_SOURCE:-$here/../vendor/x.tar.gz}", darshan)
    assert not escapes('. "$(dirname "$0")/../lib.sh"', darshan)
    assert escapes('cd "$STORAGELAB_ROOT/../elsewhere"', Path("docker/dev"))
    assert not escapes(
        'ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)', Path("docker/dev")
    )
    assert escapes("OUT=$here/../../../../tmp", darshan)


def vendored() -> dict[str, tuple[str, str]]:
    """README's table: file -> the SHA-256's first 8 and last 6 hex digits."""
    table = (VENDOR / "README.md").read_text()
    rows = re.findall(r"^\| `([^`]+)` \|.*?SHA-256 `([0-9a-f]{8})…([0-9a-f]{6})`", table, re.M)
    return {name: (head, tail) for name, head, tail in rows}


def test_every_vendored_source_is_the_one_its_readme_names() -> None:
    listed = vendored()
    on_disk = {p.name for p in VENDOR.iterdir() if p.name != "README.md"}
    assert set(listed) == on_disk
    assert {"ior-5fcf0ba.tar.gz", "darshan-45bcba8.tar.gz"} <= on_disk
    for name, (head, tail) in listed.items():
        digest = hashlib.sha256((VENDOR / name).read_bytes()).hexdigest()
        assert (digest[:8], digest[-6:]) == (head, tail), name
