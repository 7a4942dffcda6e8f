"""What a run shared, in words: the runs it had company of on its target
(jobs/company.py) and its write figure against the site's quiet figure.

The quiet figure is the calibration's measured median of the run's exercise on its
target (MeasuredReference, written once a round has finished: calibration/rounds.py):
never a class figure, never a published one. Without one, only the company is said.
Percentages are of the two figures as pages write them (portal/units.py:
ratio_as_shown), so a reader who divides the figures beside it gets the same."""

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Q
from django.utils import timezone

from exercises.catalogue.figures import SiteReferences
from exercises.catalogue.lessons import Crowd, Side
from exercises.catalogue.models import MeasuredReference, Metric, ReferenceResult
from jobs.company import Company
from jobs.figures import shown
from jobs.models import BenchmarkRun
from jobs.stored import Space, kept
from portal.units import ratio_as_shown

# A run that shared and wrote less than this share of the quiet figure is said to have
# paid for its company (the lesson turns it into teaching: lessons.py).
WELL_BELOW = 0.8


@dataclass(frozen=True)
class Quiet:
    """The site's quiet figure of an exercise on a target, and where it comes from."""

    median: float  # write MiB/s
    calibration: int | None = None  # its round
    measured_at: datetime | None = None

    @property
    def source(self) -> str:
        """'calibration round 3 (24 November 2026)'"""
        day = f"{timezone.localtime(self.measured_at):%-d %B %Y}" if self.measured_at else ""
        if self.calibration:
            return f"calibration round {self.calibration}" + (f" ({day})" if day else "")
        return f"the site's calibration of {day}" if day else "the site's calibration"


Quiets = dict[tuple[int, int], Quiet]  # (exercise id, target id) -> its quiet figure


def quiet_figures(runs: Iterable[BenchmarkRun]) -> Quiets:
    """The quiet figures of the runs' exercises on their targets (1 query; none
    without runs of an exercise)."""
    pairs = {(run.exercise_id, run.target_id) for run in runs if run.exercise_id}
    if not pairs:
        return {}
    wanted = Q()
    for exercise_id, target_id in pairs:
        wanted |= Q(exercise_id=exercise_id, target_id=target_id)
    rows = MeasuredReference.objects.filter(wanted, metric=Metric.WRITE).values_list(
        "exercise_id", "target_id", "median", "calibration_id", "measured_at"
    )
    return {(e, t): Quiet(median, round_, at) for e, t, median, round_, at in rows}


def site_quiet(references: SiteReferences) -> Quiets:
    """The same from the site's references a page already holds (no query)."""
    return {
        (exercise_id, target_id): Quiet(median, round_, at)
        for exercise_id, target_id, median, _low, _high, at, round_ in references.measured
    }


@dataclass(frozen=True)
class Shared:
    """A run's company, and its write figure against the quiet figure."""

    target: str  # the target's name, "$SCRATCH"
    nodes: str  # its node(s), for a target each node has its own of; "" otherwise
    company: Company
    figure: float | None  # the run's write MiB/s, once it has one
    quiet: Quiet | None
    running: bool = False

    @property
    def percent(self) -> int | None:
        """The run's figure as a whole percentage of the quiet figure, or None."""
        if self.figure is None or self.quiet is None:
            return None
        ratio = ratio_as_shown(self.figure, self.quiet.median)
        return None if ratio is None else round(ratio * 100)

    @property
    def paid(self) -> bool:
        """It shared, and wrote well below the quiet figure."""
        return (
            bool(self.company.runs) and self.percent is not None and self.percent < WELL_BELOW * 100
        )

    @property
    def crowd(self) -> Crowd | None:
        """What the lesson says of it, if it paid for its company."""
        if not self.paid or self.quiet is None or self.percent is None:
            return None
        return Crowd(self.target, self.company.runs, self.percent, self.quiet.median)

    def company_sentence(self, owner: str = "yours") -> str:
        """'7 other runs wrote to $SCRATCH while yours ran: 3 of them yours, 4 other
        trainees'.' `owner`: whose run it is, as the reader says it ("yours", "ada's")."""
        where = f"{self.target} on {self.nodes}" if self.nodes else self.target
        when = f"since {owner} started" if self.running else f"while {owner} ran"
        n = self.company.runs
        if not n:
            return f"No other run of the portal's wrote to {where} {when}."
        said = f"{n} other run{'s' if n != 1 else ''} wrote to {where} {when}"
        # Whose they are: (how many, said of several, said of one).
        parts = [
            (self.company.mine, owner, None),
            (self.company.others, "other trainees'", "another trainee's"),
            (self.company.site, "the site's calibration's", None),
        ]
        kinds = [
            (count, whose if count > 1 or not one else one) for count, whose, one in parts if count
        ]
        if len(kinds) == 1:
            whose = kinds[0][1]
            return f"{said}: {'it was' if n == 1 else 'all of them'} {whose}."
        listed = ", ".join(
            f"{count} of them {whose}" if i == 0 else f"{count} {whose}"
            for i, (count, whose) in enumerate(kinds)
        )
        return f"{said}: {listed}."

    def figure_sentence(self, owner: str = "yours") -> str:
        """'Yours is 58 % of the quiet 996.0 MiB/s of calibration round 3 (24 November
        2026).'; '' without a figure or a quiet figure."""
        if self.percent is None or self.quiet is None:
            return ""
        whose = "Yours" if owner == "yours" else "This run's figure"
        return (
            f"{whose} is {self.percent} % of the quiet {shown(self.quiet.median)} "
            f"MiB/s of {self.quiet.source}."
        )

    @property
    def short(self) -> str:
        """The runs panel's line: 'shared with 3 runs; 58 % of quiet'; '' alone."""
        n = self.company.runs
        if not n:
            return ""
        said = f"shared with {n} run{'s' if n != 1 else ''}"
        return f"{said}; {self.percent} % of quiet" if self.percent is not None else said


def shared(
    run: BenchmarkRun, company: Company | None, quiets: Quiets, figure: float | None
) -> Shared | None:
    """What `run` shared (None for a run that has not started), its `figure` set
    against its quiet figure in `quiets`."""
    if company is None:
        return None
    return Shared(
        target=run.target.name,
        nodes=run.node_names if run.node_local else "",
        company=company,
        figure=figure,
        quiet=quiets.get((run.exercise_id, run.target_id)),
        running=run.is_unfinished,
    )


@dataclass(frozen=True)
class QuietRun:
    """The site's quiet figures of an exercise on a target: its write MiB/s, a sweep's
    at each request size, the space its files took; and where they come from."""

    median: float
    sizes: dict[int, float]
    space: Space | None
    source: str  # "calibration round 3, 24 November 2026", "published: VSC-3 course (2019)"

    def figure(self, side: Side) -> float | None:
        """`side`'s figure, as lessons.Side.figure reads a run's."""
        return side.figure(self.median, self.sizes, self.space)


@dataclass(frozen=True)
class QuietSides:
    """The site's quiet figures of the sides a lesson names: (exercise key, target key)
    -> QuietRun. A calibration's where it has one, else the site's published figure."""

    runs: dict[tuple[str, str], QuietRun]

    def figure(self, side: Side) -> float | None:
        run = self.runs.get((side.exercise, side.target))
        return run.figure(side) if run else None

    def source(self, side: Side) -> str:
        run = self.runs.get((side.exercise, side.target))
        return run.source if run else ""


def quiet_sides(published: Iterable[tuple], measured: Iterable[tuple]) -> QuietSides:
    """From the site's published write figures (exercise key, target key, value, unit,
    source) and its measured ones (exercise key, target key, median, by_size, space,
    round, measured at): a calibration's where there is one (no query)."""
    runs: dict[tuple[str, str], QuietRun] = {}
    for exercise_key, target_key, value, unit, source in published:
        mib_s = ReferenceResult(value=value, unit=unit).mib_s
        if mib_s is not None:
            runs[(exercise_key, target_key)] = QuietRun(mib_s, {}, None, f"published: {source}")
    for exercise_key, target_key, median, by_size, space, round_, at in measured:
        runs[(exercise_key, target_key)] = QuietRun(
            median,
            {int(size): value for size, value in (by_size or {}).items()},
            _space(space),
            _measured_by(round_, at),
        )
    return QuietSides(runs)


def _measured_by(round_: int | None, at: datetime | None) -> str:
    """ "calibration round 3, 24 November 2026" """
    day = f"{timezone.localtime(at):%-d %B %Y}" if at else ""
    said = f"calibration round {round_}" if round_ else "the site's calibration"
    return f"{said}, {day}" if day else said


def _space(space: dict | None) -> Space | None:
    """A measured reference's space (medians in bytes), or None: none, or edited past
    what can be true."""
    try:
        return kept((space or {}).get("held"), (space or {}).get("stored"))
    except ValueError:
        return None
