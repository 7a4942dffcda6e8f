"""The storage scanner as the scan's job runs it (`python3 -I -S -`, its program on stdin,
the standard library only): what fills a directory, what a purge takes, bounded in
entries and seconds, never following a link."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from exercises.quotas.scans import PROGRAM

DAY = 86400


def scan(directory: Path, purge: dict | None = None, **bounds: float) -> dict:
    spec = {
        "now": round(time.time()),
        "max_entries": bounds.get("max_entries", 100_000),
        "seconds": bounds.get("seconds", 60),
        "top": bounds.get("top", 5),
        "targets": [{"key": "scratch", "dir": str(directory), "purge": purge}],
    }
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-", json.dumps(spec)],
        input=PROGRAM.encode(),
        capture_output=True,
        check=True,
        timeout=60,
    )
    return json.loads(done.stdout)["targets"][0]


def put(path: Path, size: int, *, accessed: float = 0, modified: float = 0) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)
    now = time.time()
    os.utime(path, (now - accessed * DAY, now - modified * DAY))


ACCESS_14 = {"days": 14, "by": "access", "exempt": []}


def test_it_counts_what_fills_each_directory_one_level_deeper(tmp_path) -> None:
    for i in range(3):
        put(tmp_path / "big" / "run1" / f"f{i}", 64 * 1024)
    for i in range(10):
        put(tmp_path / "many" / f"n{i}", 10)
    put(tmp_path / "top.txt", 4096)

    found = scan(tmp_path)

    dirs = {d["path"]: d for d in found["dirs"]}
    assert dirs["big"]["bytes"] >= 3 * 64 * 1024 and dirs["big"]["files"] == 4  # run1 and 3
    assert dirs["many"]["files"] == 10
    assert dirs["."]["files"] == 1  # the file right in the directory
    assert [c["path"] for c in dirs["big"]["children"]] == ["big/run1"]
    assert dirs["big"]["children"][0]["files"] == 3
    assert found["state"] == "done" and found["entries"] == 3 + 10 + 1 + 3  # and 3 dirs
    assert "purge" not in found  # no policy, no preview


def test_what_the_purge_takes_counts_from_the_policys_time(tmp_path) -> None:
    put(tmp_path / "old.dat", 8192, accessed=20, modified=20)
    put(tmp_path / "read-lately.dat", 8192, accessed=1, modified=40)
    put(tmp_path / "due-in-2-days.dat", 8192, accessed=12, modified=12)
    put(tmp_path / "fresh.dat", 8192)
    put(tmp_path / "keep" / "old.dat", 8192, accessed=30, modified=30)

    by_access = scan(tmp_path, {**ACCESS_14, "exempt": ["keep/*"]})["purge"]
    by_modify = scan(tmp_path, {"days": 14, "by": "modify", "exempt": []})["purge"]

    assert [f["path"] for f in by_access["files"]] == ["old.dat", "due-in-2-days.dat"]
    assert by_access["due"]["0"]["files"] == 1 and by_access["due"]["1"]["files"] == 1
    assert by_access["due"]["3"]["files"] == 2 and by_access["due"]["7"]["files"] == 2
    # By modification, the file read lately is due, and the exempt one is not exempt.
    assert {f["path"] for f in by_modify["files"]} == {
        "old.dat",
        "read-lately.dat",
        "due-in-2-days.dat",
        "keep/old.dat",
    }
    assert by_modify["due"]["0"]["files"] == 3


def test_links_are_not_followed_and_hard_links_count_once(tmp_path) -> None:
    outside = tmp_path / "outside"
    put(outside / "huge.dat", 512 * 1024, accessed=30)
    mine = tmp_path / "mine"
    put(mine / "a.dat", 64 * 1024)
    os.link(mine / "a.dat", mine / "b.dat")
    os.symlink(outside, mine / "to-outside")
    os.symlink(outside / "huge.dat", mine / "huge-link")

    found = scan(mine, ACCESS_14)

    assert found["entries"] == 4
    assert found["bytes"] < 128 * 1024  # a.dat once; nothing of outside/
    assert found["purge"]["due"]["7"]["files"] == 0  # a link is not a file the purge takes


def test_a_walk_stops_at_its_bound_and_says_so(tmp_path) -> None:
    for i in range(3000):
        (tmp_path / f"f{i}").touch()

    found = scan(tmp_path, max_entries=1000)

    assert found["state"] == "stopped" and found["entries"] == 1000
    assert "1,000 entries" in found["why"]


def test_names_that_are_not_text_come_back_printable(tmp_path) -> None:
    odd = os.fsencode(tmp_path) + b"/bad\xffname\nwith-newline"
    with open(odd, "wb") as f:
        f.write(b"x")
    os.utime(odd, (time.time() - 30 * DAY, time.time() - 30 * DAY))

    found = scan(tmp_path, ACCESS_14)

    (due,) = found["purge"]["files"]
    assert due["path"] == "bad\ufffdname?with-newline" and due["path"].isprintable()


def test_a_missing_directory_is_said_not_counted_as_empty(tmp_path) -> None:
    found = scan(tmp_path / "nope")

    assert found["state"] == "missing" and "does not exist" in found["why"]
