"""The one source of the figures the advisor quotes: for an exercise, per target, a
median with where it comes from. The site's own calibration first, then the lab's
trainees (the median of each one's median), then what the site published; never
a maximum. One source for all targets of a comparison, so that a speed-up sets
figures of one kind beside each other."""

import statistics
from dataclasses import dataclass

from exercises.catalogue.models import (
    RESULT_FIELD,
    MeasuredReference,
    Metric,
    ReferenceResult,
    SiteProfile,
)
from jobs.figures import shown
from jobs.models import RunResult


@dataclass(frozen=True)
class SiteFigure:
    value: float  # the median: MiB/s, or files per second for a metadata metric
    # "measured here by calibration round 3 on 24 November 2026: the median of 5 runs,
    # 310.2–355.0 MiB/s"; a round's figures exist once it has finished (calibration/rounds.py)
    source: str


SiteFigures = dict[str, SiteFigure]  # target key -> its figure


def for_exercise(profile: SiteProfile, exercise_key: str, metric: Metric) -> SiteFigures:
    """Target key -> figure for one exercise and metric: the first of the site's
    measured references, the lab's results and the published references that has
    figures for two targets or more."""
    for source in (measured, lab_trainees, published):
        found = source(profile, exercise_key, metric)
        if len(found) >= 2:
            return found
    return {}


def measured(profile: SiteProfile, key: str, metric: Metric) -> SiteFigures:
    found: SiteFigures = {}
    rows = MeasuredReference.objects.filter(
        exercise__profile=profile, exercise__key=key, metric=metric
    ).select_related("target")
    for ref in rows:
        runs = len(ref.values) if isinstance(ref.values, list) else 0
        by = f" by calibration round {ref.calibration_id}" if ref.calibration_id else ""
        found[ref.target.key] = SiteFigure(
            ref.median,
            f"measured here{by} on {ref.measured_at:%-d %B %Y}: the median of {runs} "
            f"run{'s' if runs != 1 else ''}, {shown(ref.low)}–{shown(ref.high)} MiB/s",
        )
    return found


def lab_trainees(profile: SiteProfile, key: str, metric: Metric) -> SiteFigures:
    """The lab's figures: the median of each trainee's median, so that one person's
    repeats count once (the site's calibration runs are the site's, not a trainee's)."""
    medians = RunResult.objects.filter(
        run__exercise__profile=profile, run__exercise__key=key, run__calibration=None
    ).people_medians(RESULT_FIELD[metric], "run__target__key")
    return {
        target_key: SiteFigure(statistics.median(people), _trainees(people))
        for (target_key,), people in medians.items()
    }


def _trainees(people: list[float]) -> str:
    if len(people) == 1:
        return "the median of one trainee's runs in this lab"
    return f"the median of {len(people)} trainees' medians in this lab"


def published(profile: SiteProfile, key: str, metric: Metric) -> SiteFigures:
    found: SiteFigures = {}
    rows = ReferenceResult.objects.filter(
        exercise__profile=profile, exercise__key=key, metric=metric
    ).select_related("target")
    for ref in rows:
        if ref.mib_s is not None:
            found[ref.target.key] = SiteFigure(ref.mib_s, f"published: {ref.source or 'the site'}")
    return found
