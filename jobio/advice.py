"""The advisor's inputs for a profile, from the site's database: its targets' facts,
its exercises' shapes, and the figures of the exercise the job resembles (medians:
measured here by calibration, else the lab's own results, else the published
references; exercises/site_figures.py)."""

from collections.abc import Mapping

from exercises import lab, site_figures
from exercises.advisor.job import ExerciseShape, JobAdvice, advise_job
from exercises.models import Metric, SiteProfile
from jobio.profile import IOProfile

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
            reads=e.read_back,
        )
        for e in profile.exercises.all()
        if not e.measures_metadata
    ]


def figures(profile: SiteProfile, exercise_key: str, reading: bool) -> Figures:
    """Target key -> (MiB/s, where from) for one exercise: its medians from
    exercises/site_figures.py, the same figures every page quotes: its reads or its
    writes (the advisor falls back to writes, and says so)."""
    metric = Metric.READ if reading else Metric.WRITE
    found = site_figures.for_exercise(profile, exercise_key, metric)
    return {key: (f.mib_s, f.source) for key, f in found.items()}


def advice_for(io: IOProfile, profile: SiteProfile | None = None) -> JobAdvice:
    profile = profile or lab.active_profile()
    return advise_job(
        io,
        lab.target_facts(profile),
        profile.node_memory_gib,
        shapes(profile),
        lambda key, reading: figures(profile, key, reading),
    )
