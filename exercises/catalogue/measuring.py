"""Where the site's quiet figures stand while they are measured: what a page says in
place of a figure the site does not have yet ("being measured: 40 of 240 runs, about
12 minutes left").

The calibration owns the rounds (exercises/calibration/), and sits above the pages
that show figures: it registers how to read where its rounds stand (`register`, from
its ready()), as the apps plug their checks into portal/health.py; a page asks
`standing` for its site, only where a figure is missing: a calibrated site's pages
never ask.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from django.utils import timezone


@dataclass(frozen=True)
class Round:
    """A calibration round as a page names it."""

    number: int
    exercises: frozenset[str]
    targets: frozenset[str]
    runs: int  # planned
    ended: int  # of them
    minutes_left: int | None  # about; None: no way to tell yet
    # The exercises of the round that follows it, and about when that one ends.
    then: frozenset[str] = frozenset()
    then_minutes: int | None = None


@dataclass(frozen=True)
class Standing:
    """The site's round going, if any, and its last finished one (the figures it kept)."""

    going: Round | None = None
    finished: Round | None = None
    finished_at: datetime | None = None
    read_at: datetime = field(default_factory=timezone.now)

    def of(self, exercise: str, target: str) -> str:
        """Why the pair has no quiet figure, in a few words for a table's cell."""
        going = self.going
        # The sentence above the table says how far the round is and how long it has.
        if going and exercise in going.exercises and target in going.targets:
            return f"being measured (round {going.number})"
        if going and exercise in going.then and target in going.targets:
            return f"next to be measured (after round {going.number})"
        if (
            self.finished
            and exercise in self.finished.exercises
            and target in self.finished.targets
        ):
            return f"round {self.finished.number} measured no figure of it (its runs failed)"
        return "not calibrated yet"

    def sentence(self, exercise: str) -> str:
        """For an exercise page with pairs that have no quiet figure: when they will."""
        going = self.going
        if going and exercise in going.exercises:
            left = f", about {going.minutes_left} minutes left" if going.minutes_left else ""
            return (
                f"The site's quiet figures of {exercise} are being measured: calibration round "
                f"{going.number}, {going.ended} of {going.runs} runs{left} (as of "
                f"{timezone.localtime(self.read_at):%H:%M}). They appear under Measured here "
                "when the round ends."
            )
        if going and exercise in going.then:
            when = f", in about {going.then_minutes} minutes" if going.then_minutes else ""
            return (
                f"The site's quiet figures of {exercise} come with the calibration round after "
                f"round {going.number}{when} (as of {timezone.localtime(self.read_at):%H:%M})."
            )
        return ""


Reader = Callable[[int], Standing]
_reader: list[Reader] = []


def register(reader: Reader) -> None:
    """The calibration's reader of where a site's rounds stand (once)."""
    _reader[:] = [reader]


def standing(profile_id: int) -> Standing:
    """Where the site's rounds stand (the reader's queries, asked only by a page that
    lacks a quiet figure); nothing going without a reader."""
    return _reader[0](profile_id) if _reader else Standing()


def say_unmeasured(profile_id: int, rows: list) -> Standing | None:
    """Sets `unmeasured` on each of `rows` (Figures, or rows like them with
    `has_measured`, `exercise` or the page's exercise, and `target`) that has no quiet
    figure: why, in a few words. Returns the standing it read, None where every row
    had its figure (no query then)."""
    missing = [row for row in rows if not row.has_measured]
    if not missing:
        return None
    found = standing(profile_id)
    for row in missing:
        row.unmeasured = found.of(row.exercise.key, row.target.key)
    return found
