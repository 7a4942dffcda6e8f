"""The storage scan: what fills a user's directories, and what the next purges take. It
runs as the user, on a node of the cluster, in the scan's Slurm job (scans.py puts this
file in the job script): so it imports the standard library only, and runs on the
nodes' Python (3.11 or later).

    python3 -I -S - SPEC < scanner.py

SPEC (JSON): {"now": epoch seconds, "max_entries": N, "seconds": S, "top": K,
              "targets": [{"key": "scratch", "dir": "/scratch/ada",
                           "purge": {"days": 14, "by": "access", "exempt": []} or null}]}

It prints, per target, the entries and bytes it counted, the K largest directories one
level below the user's directory by bytes and by entries (each with its K largest
children), and, where the target is purged, what falls due: now, within 1, 3 and 7
days, counts and bytes, and the K largest and K oldest of those files by name.

Each target's walk is bounded: at most max_entries entries and `seconds` seconds; one
stopped early says so ("stopped") and gives what it counted. It never follows a link,
never leaves the directory's filesystem, counts a file with several hard links once,
and reads only names and inodes: lstat changes no access time.
"""

import fnmatch
import heapq
import json
import os
import stat
import sys
import time

DAY = 86400
WINDOWS = (0, 1, 3, 7)  # due now (the next purge takes it), within 1, 3 and 7 days
CHECK_EVERY = 1000  # entries between two looks at the clock
NAME_MAX = 1024  # characters of a path kept in the answer
LEVEL2_MAX = 10_000  # names kept two levels down, per directory one level down


def printable(path: str) -> str:
    """A path as a page can show it: undecodable bytes and control characters as '?'."""
    text = path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return "".join(c if c.isprintable() else "?" for c in text)[:NAME_MAX]


class Tally:
    __slots__ = ("bytes", "entries")

    def __init__(self) -> None:
        self.bytes = 0
        self.entries = 0


def _add(tally: Tally, size: int, *, below: bool) -> None:
    tally.bytes += size
    tally.entries += below


def largest(tallies: dict[str, Tally], top: int, by: str) -> list[str]:
    return heapq.nlargest(top, tallies, key=lambda name: (getattr(tallies[name], by), name))


def scan(target: dict, now: float, max_entries: int, seconds: float, top: int) -> dict:
    root = target["dir"]
    answer: dict = {"key": target["key"], "dir": root, "state": "done", "why": ""}
    started = time.monotonic()
    try:
        info = os.lstat(root)
    except FileNotFoundError:
        return {**answer, "state": "missing", "why": f"{root} does not exist"}
    except OSError as e:
        return {**answer, "state": "unreadable", "why": f"cannot read {root}: {e.strerror}"}
    if not stat.S_ISDIR(info.st_mode):
        return {**answer, "state": "unreadable", "why": f"{root} is not a directory"}
    device = info.st_dev

    purge = target.get("purge")
    if purge:
        limit = purge["days"] * DAY
        which = "st_atime" if purge["by"] == "access" else "st_mtime"
        exempt = purge.get("exempt", [])
    due = {window: Tally() for window in WINDOWS}
    due_files: list[tuple[float, str, int]] = []  # (due at, relative path, bytes)
    level1: dict[str, Tally] = {}
    level2: dict[str, dict[str, Tally]] = {}
    seen: set[int] = set()
    entries = used = unreadable = 0
    deadline = started + seconds
    pending = [""]  # paths relative to root
    while pending:
        relative = pending.pop()
        try:
            with os.scandir(os.path.join(root, relative) if relative else root) as listing:
                children = list(listing)
        except FileNotFoundError:
            continue  # removed while we walked
        except OSError:
            unreadable += 1
            continue
        for entry in children:
            # The bounds first: a walk stops before the entry past them.
            if entries >= max_entries:
                answer.update(state="stopped", why=f"it reached {max_entries:,} entries")
                pending = []
                break
            if entries % CHECK_EVERY == 0 and time.monotonic() > deadline:
                answer.update(state="stopped", why=f"it took longer than {seconds:g} s")
                pending = []
                break
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if info.st_dev != device:
                continue  # a mount inside the directory is another filesystem
            path = f"{relative}/{entry.name}" if relative else entry.name
            is_dir = stat.S_ISDIR(info.st_mode)
            entries += 1
            size = info.st_blocks * 512
            # A file of several names counts once, as du counts it; only those are
            # remembered (a set of every inode would grow with the walk).
            if not is_dir and info.st_nlink > 1:
                if info.st_ino in seen:
                    size = 0
                seen.add(info.st_ino)
            used += size
            # Its share of the directory one level down that holds it ("." for a file
            # right in the user's directory), and of the one two levels down: a
            # directory's own blocks count, the entries below it are its files.
            parts = path.split("/", 2)
            first = parts[0] if len(parts) > 1 or is_dir else "."
            _add(level1.setdefault(first, Tally()), size, below=len(parts) > 1 or not is_dir)
            if len(parts) > 1:
                children_of = level2.setdefault(first, {})
                name = f"{parts[0]}/{parts[1]}"
                # Bounded: past LEVEL2_MAX names two levels down, new ones count in their
                # parent only (the parent's figures stay whole).
                if name in children_of or len(children_of) < LEVEL2_MAX:
                    _add(
                        children_of.setdefault(name, Tally()),
                        size,
                        below=len(parts) > 2 or not is_dir,
                    )
            if is_dir:
                pending.append(path)
            elif purge and stat.S_ISREG(info.st_mode):
                if any(fnmatch.fnmatchcase(path, pattern) for pattern in exempt):
                    continue
                due_at = getattr(info, which) + limit
                for window in WINDOWS:
                    if due_at <= now + window * DAY:
                        due[window].bytes += size
                        due[window].entries += 1
                if due_at <= now + WINDOWS[-1] * DAY:
                    due_files.append((due_at, path, size))
                    if len(due_files) > 8 * top:  # keep the oldest and the largest only
                        due_files = _kept(due_files, top)
    answer.update(
        entries=entries,
        bytes=used,
        unreadable=unreadable,
        seconds=round(time.monotonic() - started, 3),
        dirs=_directories(level1, level2, top),
    )
    if purge:
        answer["purge"] = {
            "due": {str(w): {"files": t.entries, "bytes": t.bytes} for w, t in due.items()},
            "files": [
                {"path": printable(p), "bytes": b, "due_at": round(d)}
                for d, p, b in sorted(_kept(due_files, top))
            ],
        }
    return answer


def _kept(due_files: list[tuple[float, str, int]], top: int) -> list[tuple[float, str, int]]:
    """The `top` oldest and the `top` largest, once each."""
    oldest = heapq.nsmallest(top, due_files)
    biggest = heapq.nlargest(top, due_files, key=lambda f: (f[2], -f[0]))
    return list({f[1]: f for f in oldest + biggest}.values())


def _directories(level1: dict[str, Tally], level2: dict[str, dict[str, Tally]], top: int) -> list:
    names = dict.fromkeys(largest(level1, top, "bytes") + largest(level1, top, "entries"))
    found = []
    for name in names:
        children = level2.get(name, {})
        kept = dict.fromkeys(largest(children, top, "bytes") + largest(children, top, "entries"))
        found.append(
            {
                "path": printable(name),
                "bytes": level1[name].bytes,
                "files": level1[name].entries,
                "children": [
                    {"path": printable(c), "bytes": children[c].bytes, "files": children[c].entries}
                    for c in kept
                ],
            }
        )
    return found


def main(argv: list[str]) -> int:
    spec = json.loads(argv[0])
    answers = [
        scan(target, spec["now"], spec["max_entries"], spec["seconds"], spec["top"])
        for target in spec["targets"]
    ]
    print(json.dumps({"targets": answers}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
