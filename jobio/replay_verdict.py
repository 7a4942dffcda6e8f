"""Check my job's two verdicts side by side, and which the page believes: the rules'
first choice (the advisor's ranking, by the site's quiet figures and its advice:
exercises/advisor/) and the replay's fastest (the job's I/O measured on each target,
copies counted alike: replay_figures.py), in one sentence that says why.

What each knows decides. The replay ran the job's own kind of I/O on this site's
storage as it is today, each run timed for MIN_SECONDS at least; the rules count the
job at the quiet figures of the exercise it resembles, another workload, measured on
targets that ran alone. So:

- the replay ranks nothing with fewer than two runs that rank: believe the rules;
- the rules' first choice was not replayed, or its run did not rank: the measurement
  cannot judge it (tick it; replay it);
- the replay's fastest does not fit (the site advises against it for such a job, its
  quota, another node cannot see it) or would fill its quota: believe the rules, a
  speed does not lift what stops a target;
- its time leaves out copies the rules would count there, for want of a figure:
  believe the rules;
- the rules' first choice shared its target with other runs while the replay's fastest
  had its own to itself: its time is not its quiet one, believe the rules;
- within NEAR of each other: within what one run varies by, believe the rules;
- otherwise believe the replay: it measured the job's I/O, alone on each target (or,
  the faster one, even sharing), where the rules had another workload's figures, or
  none.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from exercises.advisor.job import JobAdvice
from exercises.advisor.question import Recommendation
from jobio.replay import MIN_SECONDS
from jobs.company import Company
from portal.units import spoken_seconds

# What the rules would copy to use a target (exercises/advisor/judge.py: copying).
COPIES = {
    "in": "staging your input onto it",
    "out": "copying your results to a target that keeps them",
    "in and out": "staging your input onto it and copying your results back",
}
# Two replay runs this close (the slower's time over the faster's) are about as fast:
# single runs on the dev targets spread by up to a quarter (bench/README.md).
NEAR = 1.25


class _Target(Protocol):
    key: str
    name: str


class Row(Protocol):
    """A target's replay run, as replay_figures.Measured has it."""

    target: _Target
    short: str
    company: Company | None
    copies_uncounted: str  # "in", "out", "in and out", or "" (counted, or none)

    @property
    def ranks(self) -> bool: ...

    @property
    def total_seconds(self) -> float | None: ...

    @property
    def alone(self) -> bool | None: ...


@dataclass(frozen=True)
class Side:
    target: str  # "$GLOBAL"
    said: str  # "your job's I/O about 12 s there by the site's quiet figures"


@dataclass(frozen=True)
class Beside:
    rules: Side
    replay: Side | None  # None: the replay ranks nothing
    believe: str  # "both", "rules" or "replay"
    why: str  # one sentence

    @property
    def agree(self) -> bool:
        return self.believe == "both"


def beside_the_rules(advice: JobAdvice, rows: Sequence[Row], fastest: Row | None) -> Beside | None:
    """The rules' first choice beside the replay's fastest, and which to believe."""
    if not advice.advice.ranking:
        return None
    first = advice.advice.ranking[0]
    rules = Side(first.target_name, _rules_said(first))
    ranked = [row for row in rows if row.ranks]
    if fastest is None or len(ranked) < 2:
        return Beside(rules, None, "rules", _nothing_ranked(first, rows, len(ranked)))
    replay = Side(fastest.target.name, _replay_said(fastest))
    name, fast = first.target_name, fastest.target.name
    if fastest.target.key == first.target_key:
        return Beside(
            rules,
            replay,
            "both",
            f"Both put {name} first: the rules by the site's quiet figures and its advice, "
            "the replay by your job's I/O measured there.",
        )
    ruled = next((row for row in rows if row.target.key == first.target_key), None)
    if ruled is None:
        return Beside(
            rules,
            replay,
            "replay",
            f"Of the targets replayed, believe the replay: {fast} took least, but the rules' "
            f"first choice, {name}, was not replayed: tick it too to set the two side by side.",
        )
    if not ruled.ranks:
        return Beside(
            rules,
            replay,
            "rules",
            f"Believe the rules: the replay cannot judge their first choice, as its run on "
            f"{name} {_why_not_ranked(ruled)}.",
        )
    return _both_measured(advice, first, ruled, fastest, rules, replay)


def _both_measured(
    advice: JobAdvice, first: Recommendation, ruled: Row, fastest: Row, rules: Side, replay: Side
) -> Beside:
    name, fast = first.target_name, fastest.target.name
    mine, theirs = fastest.total_seconds or 0.0, ruled.total_seconds or 0.0
    times = f"{spoken_seconds(mine)} against {spoken_seconds(theirs)} on {name}"
    other = next((r for r in advice.advice.ranking if r.target_key == fastest.target.key), None)
    if other is not None and not other.fits:
        stop = other.reasons[0].rstrip(".") if other.reasons else f"{fast} does not fit"
        return Beside(
            rules, replay, "rules",
            f"Believe the rules: {fast} measured faster ({times}), but a speed does not "
            f"lift what stops it: {_lower(stop)}.",
        )  # fmt: skip
    if other is not None and other.full:
        return Beside(
            rules, replay, "rules",
            f"Believe the rules: {fast} measured faster ({times}), but your data would fill "
            "its quota, with no room left for results.",
        )  # fmt: skip
    if fastest.copies_uncounted and not ruled.copies_uncounted:
        return Beside(
            rules, replay, "rules",
            f"Believe the rules: {fast} measured faster ({times}), but its time leaves out "
            f"{COPIES[fastest.copies_uncounted]}, which this site has no streaming figure "
            "to count yet.",
        )  # fmt: skip
    if ruled.alone is False and fastest.alone:
        runs = ruled.company.runs if ruled.company else 0
        return Beside(
            rules, replay, "rules",
            f"Believe the rules: the replay's run on {name} shared it with {runs} other "
            f"run{'s' if runs != 1 else ''} of the portal's, which slows a run, while {fast} "
            f"was alone ({times}); replay it when {name} is quiet to judge.",
        )  # fmt: skip
    if theirs < mine * NEAR:
        apart = round((theirs / mine - 1) * 100) if mine else 0
        return Beside(
            rules, replay, "rules",
            f"Believe the rules: the replay measured {fast} only {apart} % faster than {name} "
            f"({times}), within what one run varies by, so the site's quiet figures and its "
            f"advice, which put {name} first, decide.",
        )  # fmt: skip
    model = advice.model.key if advice.model else ""
    knew = (
        f"count it at exercise {model}'s quiet figures, another workload"
        if first.seconds is not None and model
        else f"had no figure to count it on {name} by and placed it by the site's advice"
    )
    where = "each alone on its target" if ruled.alone and fastest.alone else "as they were"
    return Beside(
        rules, replay, "replay",
        f"Believe the replay: it ran your job's own kind of I/O on both, each timed for "
        f"{MIN_SECONDS} s or more, {where}, where the rules {knew}: {fast} took {times}.",
    )  # fmt: skip


def _rules_said(first: Recommendation) -> str:
    where = "first" if first.fits else "closest, though nothing fits as it stands"
    if first.seconds is None:
        return f"{where}: placed by the site's advice, with no figure to count your job's I/O by"
    return (
        f"{where}: your job's I/O about {spoken_seconds(first.seconds)} there by the site's "
        "quiet figures"
    )


def _replay_said(row: Row) -> str:
    total = row.total_seconds or 0.0
    copies = ", copies counted" if getattr(row, "staging", None) else ""
    if row.copies_uncounted:
        copies = ", its copies not counted"
    return f"fastest: your job's I/O about {spoken_seconds(total)} there, measured{copies}"


def _why_not_ranked(row: Row) -> str:
    if row.short:
        return f"was {row.short}"
    status = getattr(row, "run", None)
    state = status.get_status_display().lower() if status is not None else "did not end"
    return f"has no figure ({state})"


def _nothing_ranked(first: Recommendation, rows: Sequence[Row], ranked: int) -> str:
    short = sum(1 for row in rows if row.short)
    why = (
        f"{short} of its {len(rows)} runs {'was' if short == 1 else 'were'} timed for less "
        f"than {MIN_SECONDS} s"
        if short
        else f"only {ranked} of its {len(rows)} runs came back with a figure"
    )
    return (
        f"Believe the rules, which put {first.target_name} first: the replay ranks nothing, "
        f"as {why}."
    )


def _lower(sentence: str) -> str:
    """A sentence that goes on after a colon: its first word in lower case, but a name
    ("$GLOBAL", "IOR") as it is."""
    return sentence[:1].lower() + sentence[1:] if sentence[1:2].islower() else sentence
