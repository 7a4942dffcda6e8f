"""The one source of the figures the advisor quotes: for an exercise, per target, a
quiet figure of the site with where it comes from. The site's own calibration first
(the median of a finished round's runs, which ran alone on their target), else what
the site published; never a maximum, and never the lab's trainees' runs, which share
their targets with each other. One source for all targets of a comparison, so that
a speed-up sets figures of one kind beside each other."""

from dataclasses import dataclass

from exercises.catalogue.models import (
    BANDWIDTH_METRICS,
    MeasuredReference,
    Metric,
    ReferenceResult,
    SiteProfile,
    Unit,
)
from jobs.figures import shown


@dataclass(frozen=True)
class SiteFigure:
    value: float  # the median: MiB/s, or files per second for a metadata metric
    # "measured here by calibration round 3 on 24 November 2026: the median of 5 runs,
    # 310.2–355.0 MiB/s"; a round's figures exist once it has finished (calibration/rounds.py)
    source: str


SiteFigures = dict[str, SiteFigure]  # target key -> its figure


def for_exercise(profile: SiteProfile, exercise_key: str, metric: Metric) -> SiteFigures:
    """Target key -> figure for one exercise and metric: the site's measured
    references if they have figures for two targets or more, else the published ones
    if they do."""
    for source in (measured, published):
        found = source(profile, exercise_key, metric)
        if len(found) >= 2:
            return found
    return {}


def unit_of(metric: Metric) -> str:
    return "MiB/s" if metric in BANDWIDTH_METRICS else "ops/s"


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
            f"run{'s' if runs != 1 else ''}, {shown(ref.low)}–{shown(ref.high)} "
            f"{unit_of(metric)}",
        )
    return found


def published(profile: SiteProfile, key: str, metric: Metric) -> SiteFigures:
    """The site's published figures: bandwidths in MiB/s whatever unit they were
    published in, file operations in operations per second."""
    found: SiteFigures = {}
    rows = ReferenceResult.objects.filter(
        exercise__profile=profile, exercise__key=key, metric=metric
    ).select_related("target")
    for ref in rows:
        value = ref.mib_s if metric in BANDWIDTH_METRICS else None
        if metric not in BANDWIDTH_METRICS and ref.unit == Unit.OPS_S:
            value = ref.value
        if value is not None:
            found[ref.target.key] = SiteFigure(value, f"published: {ref.source or 'the site'}")
    return found
