"""The storage scan: what fills a user's directories, and what the next purges take; and
the portal's own purge, which removes what its policy takes. Both run as the user, on a
node of the cluster, in a Slurm job (scans.py puts treewalk.py's text and then this
file's in the job script): so they import the standard library only, and run on the
nodes' Python (3.11 or later).

    python3 -I -S - SPEC < (treewalk.py, then scanner.py)

SPEC (JSON): {"kind": "scan" or "purge", "now": epoch seconds, "max_entries": N,
              "seconds": S, "top": K,
              "targets": [{"key": "scratch", "dir": "/scratch/ada",
                           "purge": {"days": 14, "by": "access", "exempt": []} or null}]}

A scan prints, per target, the entries and bytes it counted, the K largest directories
one level below the user's directory by bytes and by entries (each with its K largest
children), and, where the target is purged, what falls due: now, within 1, 3 and 7
days, counts and bytes, and the K largest and K oldest of those files by name.

Each target's walk is bounded: at most max_entries entries and `seconds` seconds; one
stopped early says so ("stopped") and gives what it counted. It never follows a link,
never leaves the directory's filesystem (its btrfs subvolumes are part of it: treewalk.py),
counts a file with several hard links once, and reads only names and inodes: lstat
changes no access time.

A purge removes, within `seconds` per target, the regular files the target's policy
takes by the same rule the scan previews (`due_at`, `exempt`), from a directory that is
the user's own, each through the descriptor of the directory it was listed in, and prints
{"removed": {key: {"files": N, "bytes": B}}}.
"""

import fnmatch
import heapq
import json
import os
import stat
import sys
import time

if __name__ != "__main__":  # in the portal; in the job, treewalk.py's text comes first
    from exercises.quotas.treewalk import (
        TopError,
        TopMissing,
        Unreadable,
        allow_deep_walks,
        blocks_once,
        walk,
    )

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


def due_at(info: os.stat_result, purge: dict) -> float:
    """When the purge takes a file: its last access (or change) and the policy's days."""
    when = info.st_atime if purge["by"] == "access" else info.st_mtime
    return when + purge["days"] * DAY


def exempt(path: str, purge: dict) -> bool:
    """Whether the policy keeps `path` (relative to the user's directory) whatever its age:
    a pattern as find's -path reads it, * matching across directories too."""
    return any(fnmatch.fnmatchcase(path, pattern) for pattern in purge.get("exempt", []))


def scan(target: dict, now: float, max_entries: int, seconds: float, top: int) -> dict:
    root = target["dir"]
    answer: dict = {"key": target["key"], "dir": root, "state": "done", "why": ""}
    started = time.monotonic()
    purge = target.get("purge")
    due = {window: Tally() for window in WINDOWS}
    due_files: list[tuple[float, str, int]] = []  # (due at, relative path, bytes)
    level1: dict[str, Tally] = {}
    level2: dict[str, dict[str, Tally]] = {}
    seen: set[tuple[int, int]] = set()
    entries = used = unreadable = 0
    deadline = started + seconds
    found = walk(root)
    try:
        for entry in found:
            if isinstance(entry, Unreadable):
                unreadable += 1
                continue
            # The bounds first: a walk stops before the entry past them.
            if entries >= max_entries:
                answer.update(state="stopped", why=f"it reached {max_entries:,} entries")
                break
            if entries % CHECK_EVERY == 0 and time.monotonic() > deadline:
                answer.update(state="stopped", why=f"it took longer than {seconds:g} s")
                break
            path, info = entry.path, entry.info
            is_dir = stat.S_ISDIR(info.st_mode)
            entries += 1
            size = blocks_once(info, seen)
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
            if purge and stat.S_ISREG(info.st_mode) and not exempt(path, purge):
                when = due_at(info, purge)
                for window in WINDOWS:
                    if when <= now + window * DAY:
                        due[window].bytes += size
                        due[window].entries += 1
                if when <= now + WINDOWS[-1] * DAY:
                    due_files.append((when, path, size))
                    if len(due_files) > 8 * top:  # keep the oldest and the largest only
                        due_files = _kept(due_files, top)
    except TopError as e:
        state = "missing" if isinstance(e, TopMissing) else "unreadable"
        return {**answer, "state": state, "why": str(e)}
    finally:
        found.close()
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


def purge(target: dict, seconds: float) -> dict:
    """Removes what the target's policy takes now from the user's own directory: regular
    files only, each by its name in the directory it was listed in (never a path a link
    could redirect). Within `seconds`; what it could not remove stays."""
    policy = target["purge"]
    now, deadline = time.time(), time.monotonic() + seconds
    looked = removed = freed = 0
    seen: set[tuple[int, int]] = set()
    found = walk(target["dir"], owner=os.getuid())
    try:
        for entry in found:
            looked += 1
            if looked % CHECK_EVERY == 0 and time.monotonic() > deadline:
                break
            if isinstance(entry, Unreadable) or not stat.S_ISREG(entry.info.st_mode):
                continue
            if due_at(entry.info, policy) > now or exempt(entry.path, policy):
                continue
            try:
                os.unlink(entry.name, dir_fd=entry.parent)
            except OSError:
                continue  # gone already, or not the user's to remove
            removed += 1
            freed += blocks_once(entry.info, seen)
    except TopError:
        pass  # no directory of the user's own here: nothing to remove
    finally:
        found.close()
    return {"files": removed, "bytes": freed}


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
    allow_deep_walks()
    if spec.get("kind") == "purge":
        removed = {t["key"]: purge(t, spec["seconds"]) for t in spec["targets"] if t["purge"]}
        print(json.dumps({"removed": removed}))
        return 0
    answers = [
        scan(target, spec["now"], spec["max_entries"], spec["seconds"], spec["top"])
        for target in spec["targets"]
    ]
    print(json.dumps({"targets": answers}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
