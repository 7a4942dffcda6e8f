"""The figures a collector returns, and the value formats the quota tools share:
sizes with or without units, "unlimited" spelled several ways, grace periods as
durations, clock times, epoch seconds or words."""

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta


class QuotaParseError(ValueError):
    """A tool's output did not say what we need; nothing is stored from it."""


@dataclass(frozen=True)
class Usage:
    """One account on one filesystem. Limits are None when there is none."""

    bytes_used: int
    bytes_soft: int | None = None
    bytes_hard: int | None = None
    files_used: int | None = None
    files_soft: int | None = None
    files_hard: int | None = None
    bytes_grace_ends: datetime | None = None
    files_grace_ends: datetime | None = None


_NUMBER = re.compile(r"^(\d+(?:\.\d+)?)([A-Za-z]*)$")
_SI = {p: 1000**i for i, p in enumerate("kMGTPE", start=1)} | {"K": 1000}
_IEC = {f"{p}i": 1024**i for i, p in enumerate("KMGTPE", start=1)} | {"ki": 1024}
_MULTIPLIERS = (
    {"": 1, "B": 1} | _SI | _IEC | {f"{prefix}B": value for prefix, value in (_SI | _IEC).items()}
)


def count(text: str, what: str, *, unit: int = 1, units: bool = False) -> int:
    """A non-negative number of `unit`s ("1234", with `units` also "1.5GiB"), in units of 1."""
    match = _NUMBER.match(text.strip())
    if not match or (match.group(2) and not units) or match.group(2) not in _MULTIPLIERS:
        raise QuotaParseError(f"{what} is not a number: {text!r}")
    number, suffix = match.groups()
    if "." in number and not suffix:
        raise QuotaParseError(f"{what} is not a whole number: {text!r}")
    return round(float(number) * _MULTIPLIERS[suffix] * unit) if suffix else int(number) * unit


def limit(text: str, what: str, *, unit: int = 1, units: bool = False) -> int | None:
    """A limit, where 0 (the quota tools' convention) and 'unlimited' mean no limit."""
    if text.strip().lower() in ("unlimited", "∞", "none", "-"):
        return None
    value = count(text, what, unit=unit, units=units)
    return value or None


def over(text: str) -> tuple[str, bool]:
    """'1234*' -> ('1234', True): lfs and quota mark a value beyond its limit with '*'."""
    text = text.strip()
    return (text[:-1], True) if text.endswith("*") else (text, False)


_DURATION = re.compile(r"(?:\d+(?:weeks?|w|days?|d|hours?|h|minutes?|min|m|seconds?|sec|s))+")
_DURATION_PART = re.compile(r"(\d+)([a-z]+)")


def duration(text: str) -> timedelta | None:
    """'6d23h59m57s', '1w2d', '7 days', '6days', '2 hours', '13:45' (hh:mm) -> timedelta."""
    text = re.sub(r"\s+", "", text.lower())
    clock = re.fullmatch(r"(\d+):(\d{2})", text)
    if clock:
        return timedelta(hours=int(clock[1]), minutes=int(clock[2]))
    if not _DURATION.fullmatch(text):
        return None
    seconds = 0
    for number, unit in _DURATION_PART.findall(text):
        key = "M" if unit.startswith("mi") or unit == "m" else unit[0]
        seconds += int(number) * {"w": 604800, "d": 86400, "h": 3600, "M": 60, "s": 1}[key]
    return timedelta(seconds=seconds)


def grace(text: str, now: datetime, *, no_grace: tuple[str, ...], expired: tuple[str, ...]):
    """When a grace period ends: None if there is none, `now` if it is already over. Each
    tool spells these differently ("none" is no grace for mmlsquota, over for lfs)."""
    word = text.strip().lower()
    if word in no_grace:
        return None
    if word in expired:
        return now
    if word.isdigit():  # quota -p: seconds since the epoch, 0 for none
        return datetime.fromtimestamp(int(word), UTC) if int(word) else None
    left = duration(word)
    if left is None:
        raise QuotaParseError(f"grace period not understood: {text!r}")
    return now + left
