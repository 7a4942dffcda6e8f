"""The one source of the figures the advisor quotes: for an exercise, per target, a
median with where it comes from. The site's own calibration first, then the class's
runs (the median of everyone's runs in the lab), then what the site published; never
a maximum. One source for all targets of a comparison, so that a speed-up sets
figures of one kind beside each other."""

import statistics
from collections import defaultdict
from dataclasses import dataclass

from exercises.catalogue.models import (
    RESULT_FIELD,
    MeasuredReference,
    Metric,
    ReferenceResult,
    SiteProfile,
)
from jobs.models import RunResult
from portal.units import mib


@dataclass(frozen=True)
class SiteFigure:
    mib_s: float  # the median
    source: str  # "measured here on 24 November 2026: the median of 5 runs, 310.2–355.0 MiB/s"


SiteFigures = dict[str, SiteFigure]  # target key -> its figure


def for_exercise(profile: SiteProfile, exercise_key: str, metric: Metric) -> SiteFigures:
    """Target key -> figure for one exercise and metric: the first of the site's
    measured references, the lab's results and the published references that has
    figures for two targets or more."""
    for source in (measured, class_runs, published):
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
        found[ref.target.key] = SiteFigure(
            ref.median,
            f"measured here on {ref.measured_at:%-d %B %Y}: the median of {runs} "
            f"run{'s' if runs != 1 else ''}, {ref.low:,.1f}–{ref.high:,.1f} MiB/s",
        )
    return found


def class_runs(profile: SiteProfile, key: str, metric: Metric) -> SiteFigures:
    field = RESULT_FIELD[metric]
    per_target: dict[str, list[float]] = defaultdict(list)
    rows = (
        RunResult.objects.with_figure(field)
        .filter(run__exercise__profile=profile, run__exercise__key=key)
        .values_list("run__target__key", field)
    )
    for target_key, bytes_per_s in rows:
        per_target[target_key].append(mib(bytes_per_s))
    return {
        k: SiteFigure(
            statistics.median(v),
            f"the median of {len(v)} run{'s' if len(v) > 1 else ''} in this lab",
        )
        for k, v in per_target.items()
    }


def published(profile: SiteProfile, key: str, metric: Metric) -> SiteFigures:
    found: SiteFigures = {}
    rows = ReferenceResult.objects.filter(
        exercise__profile=profile, exercise__key=key, metric=metric
    ).select_related("target")
    for ref in rows:
        if ref.mib_s is not None:
            found[ref.target.key] = SiteFigure(ref.mib_s, f"published: {ref.source or 'the site'}")
    return found
