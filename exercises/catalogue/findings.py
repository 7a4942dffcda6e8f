"""What an exercise's figures say, in words chosen from them when the page is drawn.

A claim (lessons.py) is a lesson the site promises: the lesson bench checks that
single runs show it. Much of what a profile would like to say is no such promise: in
$TMPDIR collective I/O may win or lose, 8 writers may or may not gain on a disk. Such
a sentence is a finding: two sides, as claims name them, and a sentence for each way
the figures may fall:

    findings = [
      { side = "tmp", against = "8a/tmp",
        higher = "In $TMPDIR collective calls won as well: ...",
        alike = "In $TMPDIR the two ways wrote about alike: ...",
        lower = "In $TMPDIR collective calls lost: ..." },
    ]

`higher`: the side's figure is more than `within` times the other's (default
ALIKE, as "about as fast" in predictions/versus.py); `lower`: less than 1/`within`
times; else `alike`. A way left out is said from the figures alone ("8b on $TMPDIR
wrote 1.7× as fast as 8a on $TMPDIR."). The page picks the sentence the trainee's
latest figures support, else the site's quiet figures (calibration, else published),
and shows the figures beside it (`said`); with no figure on either side it says what
to run, and no outcome.
"""

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from exercises.catalogue.lessons import Side, side_of
from jobs.figures import shown
from portal.units import MiB, iec, ratio_as_shown, times

FINDING_FIELDS = {"side", "against", "within", "higher", "alike", "lower"}
WAYS = ("higher", "alike", "lower")
# About the same: neither figure more than this times the other.
ALIKE = 1.25


@dataclass(frozen=True)
class Finding:
    side: Side
    against: Side
    within: float
    higher: str = ""  # "" : said from the figures alone
    alike: str = ""
    lower: str = ""

    def sentence(self, way: str) -> str:
        return getattr(self, way)

    @property
    def sentences(self) -> list[str]:
        return [s for s in (self.higher, self.alike, self.lower) if s]

    @property
    def sides(self) -> tuple[Side, Side]:
        return self.side, self.against


def parse(
    raw: Any,
    exercise: str,
    exercises: Iterable[str] | None = None,
    targets: Iterable[str] | None = None,
    sweeps: dict[str, Iterable[int]] | None = None,
) -> list[Finding]:
    """The findings of exercise `exercise` as its profile gives them, their sides
    checked as a claim's (lessons.side_of); ValueError says what to fix."""
    known = (
        None if exercises is None else set(exercises),
        None if targets is None else set(targets),
    )
    if not isinstance(raw, list):
        raise ValueError(f"exercise {exercise!r}: findings is a list of tables")
    found = []
    for number, item in enumerate(raw, start=1):
        which = f"exercise {exercise!r}, finding {number}"
        if not isinstance(item, dict):
            raise ValueError(f"{which}: a finding is a table (side, against, higher, alike, lower)")
        if unknown := set(item) - FINDING_FIELDS:
            raise ValueError(f"{which}: unknown field(s) {', '.join(sorted(unknown))}")
        if missing := sorted({"side", "against"} - set(item)):
            raise ValueError(f"{which}: missing {', '.join(missing)}")
        side, against = (
            side_of(item[name], exercise, which, *known, sweeps) for name in ("side", "against")
        )
        if side == against:
            raise ValueError(f"{which}: {side} is compared with itself")
        if bool(side.space) != bool(against.space):
            raise ValueError(f"{which}: a space (:written, :stored) is compared with spaces only")
        within = item.get("within", ALIKE)
        if isinstance(within, bool) or not isinstance(within, int | float):
            raise ValueError(f"{which}: within {within!r} is not a number")
        if not (math.isfinite(within) and within >= 1):
            raise ValueError(f"{which}: within {within} is not 1 or more")
        words = {}
        for way in WAYS:
            text = item.get(way, "")
            if not isinstance(text, str):
                raise ValueError(f"{which}: {way} is a sentence, not {text!r}")
            words[way] = text.strip()
        if not any(words.values()):
            raise ValueError(f"{which}: say at least one of {', '.join(WAYS)} in a sentence")
        found.append(Finding(side, against, float(within), **words))
    return found


def findings_of(exercise: Any) -> list[Finding]:
    """An Exercise's findings (load_site_profile checks them against its site); a row
    edited past both says nothing rather than break the page."""
    try:
        return parse(exercise.findings, exercise.key)
    except ValueError:
        return []


def sides(findings: Iterable[Finding]) -> set[Side]:
    return {s for f in findings for s in f.sides}


def way(ratio: float, within: float) -> str:
    """Which way `ratio` (side / against) falls: higher, alike or lower."""
    if ratio > within:
        return "higher"
    if ratio < 1 / within:
        return "lower"
    return "alike"


def named(side: Side, names: dict[str, str]) -> str:
    """ "8a on $TMPDIR", "9 on $GLOBAL at 4 KiB" """
    at = f" at {iec(side.size)}" if side.size else ""
    return f"{side.exercise} on {names.get(side.target, side.target)}{at}"


def figure_words(side: Side, value: float) -> str:
    """A side's figure as pages write it: MiB/s, or a space in bytes."""
    if side.space:
        return f"{iec(value * MiB)} {side.space}"
    return f"{shown(value)} MiB/s"


def plain(finding: Finding, chosen: str, names: dict[str, str], ratio: float) -> str:
    """The figures' own words, for a way the profile did not word."""
    a, b = named(finding.side, names), named(finding.against, names)
    if finding.side.space:
        verb = {"higher": "took more space than", "alike": "took about as much space as"}
        said = verb.get(chosen, "took less space than")
    else:
        said = {"higher": "wrote faster than", "alike": "wrote about as fast as"}.get(
            chosen, "wrote slower than"
        )
    return f"{a} {said} {b} ({times(ratio)})."


@dataclass(frozen=True)
class Reading:
    """One set of figures of a finding's two sides, and what they say."""

    whose: str  # "Your latest runs", "The site's quiet figures (calibration round 3, ...)"
    side: float
    against: float
    ratio: float
    way: str
    sentence: str

    def figures(self, finding: Finding, names: dict[str, str]) -> str:
        return (
            f"{self.whose}: {named(finding.side, names)} {figure_words(finding.side, self.side)}, "
            f"{named(finding.against, names)} {figure_words(finding.against, self.against)} "
            f"({times(self.ratio)})"
        )


def reading(
    finding: Finding, whose: str, side: float | None, against: float | None, names: dict[str, str]
) -> Reading | None:
    """What `side` and `against` say (None without both)."""
    if not side or not against:
        return None
    ratio = ratio_as_shown(side, against)
    if ratio is None:
        return None
    chosen = way(ratio, finding.within)
    sentence = finding.sentence(chosen) or plain(finding, chosen, names, ratio)
    return Reading(whose, side, against, ratio, chosen, sentence)


@dataclass(frozen=True)
class Said:
    """A finding as the page says it: the sentence the trainee's figures support, with
    them; the site's quiet figures beside it where they say otherwise, or where the
    trainee has none; or, with no figure at all, what to run."""

    finding: Finding
    mine: Reading | None
    quiet: Reading | None
    run: str  # with neither: "Run 8b and 8a on $TMPDIR to see how they compare."
    names: dict[str, str]

    @property
    def state(self) -> str:
        """A CSS class: "mine", "quiet" (the site's figures alone) or "pending"."""
        return "mine" if self.mine else ("quiet" if self.quiet else "pending")

    @property
    def sentence(self) -> str:
        first = self.mine or self.quiet
        return first.sentence if first else self.run

    @property
    def figures(self) -> str:
        """The figures that hold the sentence, then the quiet ones where they part."""
        if self.mine is None:
            return f"{self.quiet.figures(self.finding, self.names)}." if self.quiet else ""
        said = f"{self.mine.figures(self.finding, self.names)}."
        if self.quiet is not None and self.quiet.way != self.mine.way:
            said += (
                f" {self.quiet.figures(self.finding, self.names)}, which say otherwise: "
                f"{self.quiet.sentence}"
            )
        return said

    @property
    def way(self) -> str:
        """Which way the figures its sentence comes from fall ("" without any)."""
        first = self.mine or self.quiet
        return first.way if first else ""

    @property
    def parted(self) -> bool:
        """The trainee's figures and the site's quiet ones fall different ways."""
        return bool(self.mine and self.quiet and self.mine.way != self.quiet.way)


Figure = Callable[[Side], float | None]


def said(
    finding: Finding,
    mine: Figure,
    quiet: Figure,
    quiet_whose: Callable[[Side], str],
    names: dict[str, str],
) -> Said:
    """`finding` set against my latest figures (`mine`: side -> figure or None) and the
    site's quiet ones (`quiet`, with `quiet_whose` saying where a side's come from)."""
    a, b = finding.sides
    ours = reading(finding, "Your latest runs", mine(a), mine(b), names)
    site = reading(finding, _whose(quiet_whose, a, b), quiet(a), quiet(b), names)
    runs = _runs(a, b, names)
    return Said(finding, ours, site, f"Run {runs} to see how they compare.", names)


def _runs(a: Side, b: Side, names: dict[str, str]) -> str:
    """What to run for both figures: "9 on $GLOBAL" (one run's sizes), "8b and 8a on
    $GLOBAL", "3 on $TMPDIR and $GLOBAL", "9 on $HOME at 1 MiB and 9 on $GLOBAL at 4 KiB"."""
    if a.run == b.run:
        return named(a.run, names)
    if a.target == b.target and not a.size and not b.size:
        return f"{a.exercise} and {b.exercise} on {names.get(a.target, a.target)}"
    if a.exercise == b.exercise and not a.size and not b.size:
        return (
            f"{a.exercise} on {names.get(a.target, a.target)} and {names.get(b.target, b.target)}"
        )
    return f"{named(a, names)} and {named(b, names)}"


def _whose(source: Callable[[Side], str], a: Side, b: Side) -> str:
    first, second = source(a), source(b)
    if first == second:
        return f"The site's quiet figures ({first})"
    return f"The site's quiet figures ({first}; {second})"
