"""The advisor's inputs for a profile, from the site's database: its targets' facts,
its exercises' shapes, and the figures of the exercise the job resembles (measured
here by calibration, else the lab's own results, else the published references)."""

import statistics
from collections import defaultdict
from collections.abc import Mapping

from exercises import lab
from exercises.advisor.job import ExerciseShape, JobAdvice, advise_job
from exercises.models import (
    RESULT_FIELD,
    MeasuredReference,
    Metric,
    ReferenceResult,
    SiteProfile,
)
from jobio.profile import IOProfile
from jobs.models import RunResult
from portal.units import mib

Figures = Mapping[str, tuple[float, str]]


def shapes(profile: SiteProfile) -> list[ExerciseShape]:
    """The exercises a job can resemble: those that move data (not mdtest's rates)."""
    return [
        ExerciseShape(
            key=e.key,
            title=e.title,
            pattern=e.pattern,
            block_size=e.block_size,
            processes=e.processes,
            files_per_process=e.files_per_process,
            fsync=e.fsync,
        )
        for e in profile.exercises.all()
        if not e.measures_metadata
    ]


def figures(profile: SiteProfile, exercise_key: str, reading: bool) -> Figures:
    """Target key -> (MiB/s, where from) for one exercise: the first of the site's
    measured references, the lab's results and the published references that has
    figures for two targets or more (a speed-up compares figures of one source)."""
    metric = Metric.READ if reading else Metric.WRITE
    for source in (_measured, _lab_results, _published):
        found = source(profile, exercise_key, metric)
        if len(found) >= 2:
            return found
    if reading:  # a job that reads, on a site that measured writes only
        return figures(profile, exercise_key, reading=False)
    return {}


def _measured(profile: SiteProfile, key: str, metric: str) -> dict[str, tuple[float, str]]:
    found: dict[str, tuple[float, str]] = {}
    rows = MeasuredReference.objects.filter(
        exercise__profile=profile, exercise__key=key, metric=metric
    ).select_related("target")
    for ref in rows.order_by("measured_at"):  # the newest wins
        found[ref.target.key] = (ref.median, f"measured here on {ref.measured_at:%-d %B %Y}")
    return found


def _lab_results(profile: SiteProfile, key: str, metric: str) -> dict[str, tuple[float, str]]:
    field = RESULT_FIELD[Metric(metric)]
    per_target: dict[str, list[float]] = defaultdict(list)
    rows = RunResult.objects.filter(
        run__exercise__profile=profile, run__exercise__key=key, **{f"{field}__gt": 0}
    ).values_list("run__target__key", field)
    for target_key, bytes_per_s in rows:
        per_target[target_key].append(mib(bytes_per_s))
    return {
        k: (
            statistics.median(v),
            f"the median of {len(v)} run{'s' if len(v) > 1 else ''} in this lab",
        )
        for k, v in per_target.items()
    }


def _published(profile: SiteProfile, key: str, metric: str) -> dict[str, tuple[float, str]]:
    found: dict[str, tuple[float, str]] = {}
    rows = ReferenceResult.objects.filter(
        exercise__profile=profile, exercise__key=key, metric=metric
    ).select_related("target")
    for ref in rows:
        if ref.mib_s is not None:
            found[ref.target.key] = (ref.mib_s, f"published: {ref.source or 'the site'}")
    return found


def advice_for(io: IOProfile, profile: SiteProfile | None = None) -> JobAdvice:
    profile = profile or lab.active_profile()
    return advise_job(
        io,
        lab.target_facts(profile),
        profile.node_memory_gib,
        shapes(profile),
        lambda key, reading: figures(profile, key, reading),
    )
