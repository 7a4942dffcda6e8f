"""What one run of an exercise should show, and whether runs show it.

A site's profile states each exercise's lesson as claims, in the exercise's entry:

    claims = [
      { faster = "tmp", slower = "global", factor = 5, text = "..." },
      { faster = "1a/global", slower = "global", text = "..." },
    ]

A side is a target of this exercise ("tmp") or an exercise on a target ("1a/global":
random writes against streaming on the same disk), and for a sweep of request sizes
one size's figure ("global@4KiB"). On a target that compresses, a side can be the
space of a run instead of its speed: the MiB its files hold ("project:written") or
took ("project:stored"); such a claim compares spaces only ({ faster =
"project:written", slower = "project:stored", factor = 2 }: stored in half the
space). The claim holds when the faster side's write figure
is at least `factor` times the slower side's; a claim with `within` instead says two
figures are about the same: neither more than `within` times the other (a sweep that
flattens). The lab tells a
trainee whether their own latest runs show it; `make bench` counts how often single
runs do (bench/test_lessons.py), which is how a site knows its exercises teach.
"""

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from jobs.figures import shown
from jobs.stored import Space
from portal.units import MiB, iec, ratio_as_shown, times

CLAIM_FIELDS = {"faster", "slower", "factor", "within", "text"}
SIZE_UNITS = {"KiB": 2**10, "MiB": 2**20}
# A run's space on a target that compresses (jobs/stored.py), in MiB: what its files
# hold, as the program wrote it, and what the target stored for them.
SPACES = ("written", "stored")


@dataclass(frozen=True)
class Side:
    exercise: str  # exercise key
    target: str  # target key
    size: int | None = None  # a sweep's request size in bytes: that size's figure
    space: str | None = None  # one of SPACES: the run's space, not its speed

    def __str__(self) -> str:
        size = f"@{iec(self.size).replace(' ', '')}" if self.size else ""
        space = f":{self.space}" if self.space else ""
        return f"{self.exercise}/{self.target}{size}{space}"

    @property
    def run(self) -> "Side":
        """The run the figure comes from: a sweep's sizes are one run's, and so are
        its speed and its space."""
        return Side(self.exercise, self.target)

    def figure(
        self, write_mib_s: float | None, by_size: dict[int, float | None], space: Space | None
    ) -> float | None:
        """Its figure, from its run's: MiB/s, a sweep's size's MiB/s (`by_size`), or
        MiB of space."""
        if self.size:
            return by_size.get(self.size)
        if self.space:
            return space and (space.held if self.space == "written" else space.stored) / MiB
        return write_mib_s


@dataclass(frozen=True)
class Claim:
    faster: Side
    slower: Side
    factor: float
    text: str  # the lesson in a sentence, as the exercise's page says it
    within: float | None = None  # about the same: neither side more than this times the other


def parse(
    raw: Any,
    exercise: str,
    exercises: Iterable[str] | None = None,
    targets: Iterable[str] | None = None,
    sweeps: dict[str, Iterable[int]] | None = None,
) -> list[Claim]:
    """The claims of exercise `exercise` as its profile gives them, checked against
    the profile's exercise and target keys when given, and a side's request size
    against its exercise's sweep (`sweeps`: exercise key -> its sizes); ValueError
    says what to fix."""
    known = (
        None if exercises is None else set(exercises),
        None if targets is None else set(targets),
    )
    if not isinstance(raw, list):
        raise ValueError(f"exercise {exercise!r}: claims is a list of tables")
    claims = []
    for number, item in enumerate(raw, start=1):
        which = f"exercise {exercise!r}, claim {number}"
        if not isinstance(item, dict):
            raise ValueError(f"{which}: a claim is a table (faster, slower, factor, text)")
        if unknown := set(item) - CLAIM_FIELDS:
            raise ValueError(f"{which}: unknown field(s) {', '.join(sorted(unknown))}")
        if missing := sorted({"faster", "slower", "text"} - set(item)):
            raise ValueError(f"{which}: missing {', '.join(missing)}")
        if "factor" in item and "within" in item:
            raise ValueError(
                f"{which}: a claim has a factor (faster) or within (the same), not both"
            )
        factor, within = item.get("factor", 1), item.get("within")
        for name, value in (("factor", factor), ("within", within)):
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"{which}: {name} {value!r} is not a number")
            if not (math.isfinite(value) and value >= 1):
                raise ValueError(f"{which}: {name} {value} is not 1 or more")
        faster, slower = (
            side_of(item[name], exercise, which, *known, sweeps) for name in ("faster", "slower")
        )
        if faster == slower:
            raise ValueError(f"{which}: {faster} is compared with itself")
        if bool(faster.space) != bool(slower.space):
            raise ValueError(f"{which}: a space (:written, :stored) is compared with spaces only")
        if not str(item["text"]).strip():
            raise ValueError(f"{which}: say the lesson in a sentence (text)")
        text = str(item["text"]).strip()
        claims.append(Claim(faster, slower, float(factor), text, within and float(within)))
    return claims


def side_of(
    value: Any,
    exercise: str,
    which: str,
    exercises: set[str] | None = None,
    targets: set[str] | None = None,
    sweeps: dict[str, Iterable[int]] | None = None,
) -> Side:
    """A side as a profile names it ("tmp", "1a/global", "global@4KiB",
    "project:stored") for exercise `exercise`, checked against the profile's exercise
    and target keys and sweeps where given; ValueError, beginning with `which`, says
    what to fix. Claims and findings (findings.py) name their sides alike."""
    if not isinstance(value, str):
        raise ValueError(f"{which}: {value!r} is not a target key or exercise/target")
    value, colon, space = value.partition(":")
    if colon and space not in SPACES:
        raise ValueError(f"{which}: {space!r} is not a space of a run ({', '.join(SPACES)})")
    place, at, size = value.partition("@")
    if at and colon:
        raise ValueError(f"{which}: a sweep's size has a speed, not a space")
    key, _, target = place.rpartition("/")
    side = Side(key or exercise, target, _size(size, which) if at else None, space or None)
    if not side.target:
        raise ValueError(f"{which}: {value!r} names no target")
    if exercises is not None and side.exercise not in exercises:
        raise ValueError(f"{which}: no exercise {side.exercise!r} in this profile")
    if targets is not None and side.target not in targets:
        raise ValueError(f"{which}: no target {side.target!r} in this profile")
    if sweeps is not None and side.size:
        swept = set(sweeps.get(side.exercise, ()))
        if side.size not in swept:
            sizes = ", ".join(iec(size) for size in sorted(swept)) or "none, it is no sweep"
            raise ValueError(
                f"{which}: exercise {side.exercise!r} writes no {iec(side.size)} requests "
                f"of their own (its sizes: {sizes})"
            )
    return side


def _size(text: str, which: str) -> int:
    """'4KiB' -> 4096: a request size of a sweep, as claims name it."""
    number, unit = text[:-3], text[-3:]
    if unit not in SIZE_UNITS or not number.isdigit() or not 0 < int(number) <= 65536:
        raise ValueError(f"{which}: {text!r} is not a request size such as 4KiB or 1MiB")
    return int(number) * SIZE_UNITS[unit]


def claims_of(exercise: Any) -> list[Claim]:
    """An Exercise's claims (load_site_profile and the admin check them against its
    site); a row edited past both states no lesson rather than break the page."""
    try:
        return parse(exercise.claims, exercise.key)
    except ValueError:
        return []


@dataclass(frozen=True)
class Verdict:
    claim: Claim
    fast: float | None  # MiB/s of the faster side, None: no run yet
    slow: float | None

    @property
    def ratio(self) -> float | None:
        if not self.fast or not self.slow:
            return None
        return ratio_as_shown(self.fast, self.slow)

    @property
    def holds(self) -> bool | None:
        """True: the figures show the lesson; False: they do not; None: a side has no
        figure yet."""
        ratio = self.ratio
        if ratio is None:
            return None
        if self.claim.within:
            return 1 / self.claim.within <= ratio <= self.claim.within
        return ratio >= self.claim.factor


def judge(claims: Iterable[Claim], figure: Callable[[Side], float | None]) -> list[Verdict]:
    """Each claim set against `figure`: (exercise, target) -> MiB/s or None."""
    return [Verdict(c, figure(c.faster), figure(c.slower)) for c in claims]


def sides(claims: Iterable[Claim]) -> set[Side]:
    return {s for c in claims for s in (c.faster, c.slower)}


# A claim not shown where the portal knows of nothing that stood in its way.
WHY_RUNS_VARY = (
    "Neither run shared its target with another of the portal's runs, and no canary "
    "read its target slow then: a single run can still be disturbed by what the portal "
    "does not see (other jobs on the node or the disk). Run both again."
)


# A run's space is not disturbed by others: it is its data and the filesystem's doing.
WHY_SPACE_DIFFERS = (
    "What a run's files take depends on their data and on how the target compresses it, "
    "not on who else wrote: the run's page shows what it wrote and what was stored."
)


@dataclass(frozen=True)
class Crowd:
    """A run that shared its target and wrote well below its quiet figure (quiet.py)."""

    target: str  # the target's name
    runs: int  # the other runs it shared with
    percent: int  # of the quiet figure
    quiet: float  # the quiet figure, MiB/s


@dataclass(frozen=True)
class Beside:
    """What the portal knows beside a trainee's verdict: the sides whose latest run
    shared its target and paid for it (quiet.py: Shared.paid), the storage's weather
    while a side's run went (a sentence each, said only where it read slow), the same
    claim judged on the site's quiet figures and where they come from, and the key of
    the exercise that teaches how runs scatter (spread_exercise)."""

    crowded: dict[Side, Crowd] = field(default_factory=dict)
    weather: dict[Side, str] = field(default_factory=dict)
    quiet: "Verdict | None" = None
    quiet_source: str = ""
    spread: str | None = None


@dataclass(frozen=True)
class Line:
    """A verdict as the lab page says it."""

    claim: str
    state: str  # "shown", "not-shown" or "pending" (a CSS class too)
    detail: str
    needs: float = 1.0  # the claim's factor: the page's checks read it (data-needs)
    within: float | None = None


def side_name(s: Side, names: dict[str, str]) -> str:
    """ "2a on $TMPDIR", "9 on $GLOBAL at 4 KiB" """
    at = f" at {iec(s.size)}" if s.size else ""
    return f"{s.exercise} on {names.get(s.target, s.target)}{at}"


def figures_said(verdict: Verdict, whose: str, names: dict[str, str]) -> str:
    """ "Your latest runs: 2a on $TMPDIR 4,148.4 MiB/s, 2a on $GLOBAL 1.6 MiB/s
    (2,593×)"; of one run's space, "Your latest run of 11a on $PROJECT: 128 MiB
    written, 56.1 MiB stored (2.3×)". `whose`: "Your latest runs" or the site's."""
    c = verdict.claim

    def space(value: float | None) -> str:
        """MiB of space as the run's page gives it (its bytes)."""
        return iec(value * MiB) if value is not None else "–"

    if c.faster.space and c.faster.run == c.slower.run:
        whose = "Your latest run" if whose == "Your latest runs" else whose
        return (
            f"{whose} of {side_name(c.faster, names)}: {space(verdict.fast)} {c.faster.space}, "
            f"{space(verdict.slow)} {c.slower.space} ({times(verdict.ratio)})"
        )

    def said(s: Side, value: float | None) -> str:
        if s.space:
            return f"{side_name(s, names)} {space(value)} {s.space}"
        return f"{side_name(s, names)} {shown(value)} MiB/s"

    return (
        f"{whose}: {said(c.faster, verdict.fast)}, {said(c.slower, verdict.slow)} "
        f"({times(verdict.ratio)})"
    )


def line(verdict: Verdict, names: dict[str, str], beside: Beside | None = None) -> Line:
    """The verdict in the lab's words; where the trainee's figures do not show the
    lesson, what stood in its way (`beside`) and the site's quiet figures of the same
    pair, so that the lesson still teaches."""
    c = verdict.claim
    beside = beside or Beside()
    # Both sides from one run: a run's space, or two sizes of one sweep.
    one_run = c.faster.run == c.slower.run
    if verdict.holds is None:
        if one_run:
            runs = side_name(c.faster.run, names)
        else:
            runs = f"{side_name(c.faster, names)} and {side_name(c.slower, names)}"
        return Line(
            c.text, "pending", f"Run {runs} to see it.{_quiet(beside, names)}", c.factor, c.within
        )
    figures = figures_said(verdict, "Your latest runs", names)
    company = in_company(
        [
            (side_name(s, names), beside.crowded[s])
            for s in (c.faster, c.slower)
            if s in beside.crowded
        ],
        beside.spread,
    )
    if verdict.holds:
        return Line(c.text, "shown", f"{figures}: they show it.{company}", c.factor, c.within)
    needed = f", and the lesson needs {c.factor:g}×" if c.factor > 1 else ""
    if c.within:
        needed = f", and the lesson needs them within {c.within:g}× of each other"
    weather = " ".join(beside.weather[s] for s in (c.faster, c.slower) if s in beside.weather)
    if c.faster.space:
        why = f" {WHY_SPACE_DIFFERS}"
    elif company or weather:
        why = f"{company}{' ' + weather if weather else ''}"
    else:
        why = f" {WHY_RUNS_VARY}"
    return Line(
        c.text,
        "not-shown",
        f"{figures}{needed}: they do not show it.{why}{_quiet(beside, names)}",
        c.factor,
        c.within,
    )


def _quiet(beside: Beside, names: dict[str, str]) -> str:
    """The same pair on the site's quiet figures: ' The site's quiet figures
    (calibration round 3, ...): ... (2,593×): they show it.'; '' without both."""
    verdict = beside.quiet
    if verdict is None or verdict.holds is None:
        return ""
    whose = "The site's quiet figures" + (
        f" ({beside.quiet_source})" if beside.quiet_source else ""
    )
    says = "they show it" if verdict.holds else "they do not show it either"
    return f" {figures_said(verdict, whose, names)}: {says}."


def in_company(paid: list[tuple[str, Crowd]], spread: str | None) -> str:
    """What the runs that shared and paid for it teach ('' for none): each said, then
    the lesson of shared storage."""
    if not paid:
        return ""
    said = " ".join(
        f"Your run of {name} shared {s.target} with {s.runs} other "
        f"run{'s' if s.runs != 1 else ''} and wrote {s.percent} % of its quiet "
        f"{shown(s.quiet)} MiB/s."
        for name, s in paid
    )
    lesson = (
        f"the spread between runs is the lesson of exercise {spread}"
        if spread
        else ("the spread between runs is a lesson of its own")
    )
    return f" {said} Shared storage is shared: run it again when it is quiet; {lesson}."


def spread_exercise(exercises: Iterable[Any]) -> str | None:
    """The key of the exercise that teaches how far one figure can be trusted: the
    last that runs an earlier one's workload unchanged, with its engine, for no other
    reason than to repeat it (the dev profile's 7 repeats 1a); None if none does. One
    that writes the same where its target spreads files (10b, 10a's) is no repeat."""
    seen: set[tuple] = set()
    found = None
    for exercise in exercises:
        what = (exercise.runs_with, exercise.spread, exercise.workload.model_dump_json())
        if what in seen:
            found = exercise.key
        seen.add(what)
    return found
