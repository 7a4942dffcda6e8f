"""The write MiB/s shown beside each other: for one exercise on one target, my
runs, the class (each trainee's median) and the site's reference. One shape for
every page that compares (the lab, a target's page, a course's pages), and one chart
builder. Which figures can be true and how they read: jobs/figures.py."""

import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import QuerySet

from exercises.catalogue.models import (
    Exercise,
    MeasuredReference,
    Metric,
    ReferenceResult,
    StorageTarget,
)
from jobs.figures import shown
from jobs.models import RunResult


@dataclass
class Figures:
    exercise: Exercise
    target: StorageTarget
    mine: list[float] = field(default_factory=list)  # MiB/s of my runs
    # The class: each trainee's median MiB/s, so that one trainee's repeats or double
    # click count once (trainee_medians).
    trainees: list[float] = field(default_factory=list)
    reference: float | None = None  # the site's write figure, MiB/s
    reference_source: str = ""
    # The site's figures by metric ("write", "read", "create", ...) as published, in
    # their own units (exercises/catalogue/templatetags/references.py shows them).
    published: dict[str, ReferenceResult] = field(default_factory=dict)
    # The site's own write figure, MiB/s: the median of its last calibration, with the
    # lowest and highest run (exercises/calibration/rounds.py).
    measured: float | None = None
    measured_low: float | None = None
    measured_high: float | None = None
    measured_at: datetime | None = None
    measured_round: int | None = None  # the calibration round it comes from
    # Without a measured figure: why, in a few words (exercises/catalogue/measuring.py);
    # "" where the page did not ask.
    unmeasured: str = ""
    # The most runs of the class at once on the target while one of the exercise's went
    # (exercises/courses/overview.py: at_once); 0 where nobody counted them.
    at_once: int = 0

    @property
    def measured_text(self) -> str:
        """'812.3 (790.1–845.0)': the median, lowest and highest; '–' before any
        calibration. Pages put its date (measured_at) beside it."""
        if self.measured is None:
            return self.unmeasured or "–"
        low, high = shown(self.measured_low), shown(self.measured_high)
        return f"{shown(self.measured)} ({low}–{high})"

    @property
    def has_measured(self) -> bool:
        return self.measured is not None

    @property
    def my_median(self) -> float | None:
        return statistics.median(self.mine) if self.mine else None

    @property
    def class_median(self) -> float | None:
        """The median of the trainees' medians."""
        return statistics.median(self.trainees) if self.trainees else None

    @property
    def class_low(self) -> float | None:
        return min(self.trainees, default=None)

    @property
    def class_high(self) -> float | None:
        return max(self.trainees, default=None)

    @property
    def my_cv(self) -> float | None:
        return variation(self.mine)

    @property
    def class_cv(self) -> float | None:
        """How far the trainees' medians scatter."""
        return variation(self.trainees)


def variation(values: list[float]) -> float | None:
    """The coefficient of variation (sample standard deviation / mean): how far the
    same measurement scatters from run to run, whatever its scale. None below two
    runs, where there is no spread to speak of."""
    if len(values) < 2:
        return None
    mean = statistics.fmean(values)
    if mean <= 0:
        return None
    # In floats: statistics.stdev works in exact fractions, 0.75 ms for a class of 200,
    # on every poll of the overview; a figure shown to 0.1 % needs no more than this.
    squares = math.fsum((value - mean) ** 2 for value in values)
    return math.sqrt(squares / (len(values) - 1)) / mean


Table = dict[tuple[int, int], Figures]  # (exercise id, target id) -> figures
Values = dict[tuple[int, int], list[float]]  # (exercise id, target id) -> MiB/s


def run_figures(results: QuerySet[RunResult]) -> Values:
    """The write MiB/s of each of `results` that has a true one (1 query)."""
    return results.figures("write_bytes_per_s", "run__exercise_id", "run__target_id")


def trainee_medians(results: QuerySet[RunResult]) -> Values:
    """Each trainee's median write MiB/s over `results`: a class's figures (1 query)."""
    return results.people_medians("write_bytes_per_s", "run__exercise_id", "run__target_id")


@dataclass(frozen=True)
class SiteReferences:
    """The site's own figures for some exercises on some targets: as it published
    them, and its measured write figures (exercise id, target id, median, low, high,
    measured at, calibration round)."""

    published: list[ReferenceResult]
    measured: list[tuple]


def site_references(
    exercises: Iterable[Exercise], targets: Iterable[StorageTarget]
) -> SiteReferences:
    """(2 queries)"""
    exercises, targets = list(exercises), list(targets)
    published = ReferenceResult.objects.filter(exercise__in=exercises, target__in=targets)
    measured = MeasuredReference.objects.filter(
        exercise__in=exercises, target__in=targets, metric=Metric.WRITE
    ).values_list(
        "exercise_id", "target_id", "median", "low", "high", "measured_at", "calibration_id"
    )
    return SiteReferences(list(published), list(measured))


def table(
    exercises: Iterable[Exercise],
    targets: Iterable[StorageTarget],
    *,
    mine: Values | None = None,
    trainees: Values | None = None,
    references: SiteReferences | None = None,
) -> Table:
    """Figures for every exercise on every target, from my runs' figures
    (run_figures) and the class's (trainee_medians) given, and the site's
    references (site_references: 2 queries, none when given, as
    exercises/catalogue/site.py keeps them)."""
    exercises, targets = list(exercises), list(targets)
    figures = {(e.pk, t.pk): Figures(e, t) for e in exercises for t in targets}
    for cell, row in figures.items():
        row.mine = list((mine or {}).get(cell, ()))
        row.trainees = list((trainees or {}).get(cell, ()))
    references = references or site_references(exercises, targets)
    for ref in references.published:
        row = figures[(ref.exercise_id, ref.target_id)]
        row.published[ref.metric] = ref
        if ref.metric == Metric.WRITE:
            row.reference, row.reference_source = ref.mib_s, ref.source
    for exercise_id, target_id, *figures_measured in references.measured:
        row = figures[(exercise_id, target_id)]
        (
            row.measured,
            row.measured_low,
            row.measured_high,
            row.measured_at,
            row.measured_round,
        ) = figures_measured
    return figures


def _measured(f: Figures) -> list[float] | None:
    if f.measured is None:
        return None
    return [f.measured, f.measured_low, f.measured_high]


# What a chart may draw: its legend, its kind (static/js/charts.js draws "runs" as a
# dot per run with their median across them, "point" as one marker per target,
# "range" as a marker at a median with a whisker from lowest to highest) and what it
# takes from a row.
SERIES = {
    "mine": ("My runs", "runs", lambda f: f.mine),
    "class": ("Class (each trainee's median)", "runs", lambda f: f.trainees),
    "reference": ("Site reference (published)", "point", lambda f: f.reference),
    "measured": ("Measured here (calibration: median, lowest–highest)", "range", _measured),
}


def chart(rows: list[Figures], *series: str) -> dict:
    """Per target, every run (or trainee) a dot and their median a line across them,
    beside the references: the spread stays in sight, where a bar per statistic
    would hide it."""
    drawn = []
    for name in series:
        label, kind, take = SERIES[name]
        entry = {"name": name, "label": label, "kind": kind, "values": [take(f) for f in rows]}
        if kind == "runs":
            # A dot per run: to 0.1 MiB/s, as the tooltips and tables show them (the
            # overview of a class of 200 sends 800 of them when its figures change),
            # and their median line across the dots drawn: the median of the figures
            # as measured, rounded as the table rounds it, so both say one figure.
            values = entry["values"]
            entry["medians"] = [round(statistics.median(v), 1) if v else None for v in values]
            entry["values"] = [[round(x, 1) for x in v] for v in values]
        drawn.append(entry)
    return {"labels": [f.target.name for f in rows], "series": drawn}
