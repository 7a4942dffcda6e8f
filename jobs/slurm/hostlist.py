"""Slurm's hostlists ("c1", "node[01-03,7],gpu[1-2]-ib"): the names they stand for.

A hostlist comes from slurmrestd and is kept on a run (BenchmarkRun.node_names); it is
read here, in Python, never by a shell. Its cost is bounded whatever it holds: a
range's size is worked out before any name is made, and a list of more than `limit`
names, or of a length no Slurm job has, is refused as a whole (ValueError)."""

import math
import re

# More names than any run of the lab asks for (a run on a node's own directory has one).
MAX_NAMES = 4096
MAX_LENGTH = 65536
# A number in a range: as many digits as a node name has, not an arbitrary integer.
MAX_DIGITS = 12
_BRACKETS = re.compile(r"\[([^\[\]]*)\]")
_RANGE = re.compile(rf"(\d{{1,{MAX_DIGITS}}})(?:-(\d{{1,{MAX_DIGITS}}}))?")


def entries(hostlist: str) -> list[str]:
    """The hostlist's entries, split at the commas outside brackets."""
    found, depth, start = [], 0, 0
    for at, char in enumerate(hostlist):
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
        elif char == "," and depth == 0:
            found.append(hostlist[start:at])
            start = at + 1
        if depth not in (0, 1):
            raise ValueError("nested or unmatched brackets")
    if depth:
        raise ValueError("an unclosed bracket")
    found.append(hostlist[start:])
    return [entry for entry in found if entry]


def _numbers(inside: str) -> list[tuple[int, int, int]]:
    """A bracket's ranges as (first, last, digits to pad to)."""
    ranges = []
    for item in inside.split(","):
        matched = _RANGE.fullmatch(item)
        if not matched:
            raise ValueError(f"{item!r} is no number or range")
        first, last = matched[1], matched[2] or matched[1]
        if int(last) < int(first):
            raise ValueError(f"{item!r} runs backwards")
        ranges.append((int(first), int(last), len(first)))
    return ranges


def _expand(entry: str, room: int) -> list[str]:
    """The names of one entry, at most `room` of them (else ValueError)."""
    texts = _BRACKETS.split(entry)  # text, bracket, text, bracket, ..., text
    groups = [_numbers(inside) for inside in texts[1::2]]
    count = math.prod(sum(last - first + 1 for first, last, _ in group) for group in groups)
    if count > room:
        raise ValueError(f"more than {MAX_NAMES} names")
    names = [texts[0]]
    for group, after in zip(groups, texts[2::2], strict=True):
        numbers = [
            f"{n:0{digits}d}" for first, last, digits in group for n in range(first, last + 1)
        ]
        names = [f"{name}{number}{after}" for name in names for number in numbers]
    return names


def names(hostlist: str, limit: int = MAX_NAMES) -> frozenset[str]:
    """The node names `hostlist` stands for; ValueError for one that is not a hostlist
    or stands for more than `limit` names."""
    if len(hostlist) > MAX_LENGTH:
        raise ValueError("longer than any hostlist of a job")
    found: set[str] = set()
    for entry in entries(hostlist):
        found.update(_expand(entry, limit - len(found)))
    return frozenset(found)


def clipped(hostlist: str, length: int) -> str:
    """The hostlist within `length` characters: its first whole entries (a run's own
    node, when it has one, is all of it)."""
    if len(hostlist) <= length:
        return hostlist
    kept = ""
    try:
        whole = entries(hostlist[:MAX_LENGTH])
    except ValueError:
        return ""  # no hostlist: nothing to read back from it
    for entry in whole:
        if len(kept) + bool(kept) + len(entry) > length:
            break
        kept = f"{kept},{entry}" if kept else entry
    return kept
