"""The advisor's inputs for a profile, from the site's database: its targets' facts,
its exercises' shapes, and the figures of the exercise the job resembles (the site's
quiet figures: measured here by calibration, else the published references;
exercises/catalogue/site_figures.py)."""

import statistics
from collections import defaultdict
from collections.abc import Mapping

from exercises.advisor import TargetFacts
from exercises.advisor.job import JobAdvice, advise_job
from exercises.advisor.job_io import JobIO
from exercises.advisor.question import ExerciseShape
from exercises.advisor.words import protects
from exercises.catalogue import site_figures
from exercises.catalogue.models import Exercise, Metric, SiteProfile
from exercises.catalogue.profiles import active_profile
from jobs.models import RunResult, RunStatus
from jobs.stored import Space
from portal.units import GiB

QuotedFigures = Mapping[str, tuple[float, str]]  # target key -> (median, where it comes from)


def shapes(profile: SiteProfile) -> list[ExerciseShape]:
    """The exercises a job can resemble, in the site's order. One that measures file
    operations (mdtest) has no MiB/s to quote: a job like it is advised on the
    targets' facts. It comes after the fio exercise of the same files (3 before 6), so
    only a run of mdtest itself is taken for it (ExerciseShape.engine). A sweep of
    request sizes is none."""
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
            shared_file=not e.file_per_process,
            engine=e.runs_with,
            mpi_io=e.mpi_io,
            collective=e.collective,
            spread=e.spread,
        )
        for e in profile.exercises.all()
        # A sweep of request sizes (9) is six workloads in one run: no job is like it,
        # and its one figure (its largest size's) would say one of them.
        if not e.block_sizes
    ]


def figures(profile: SiteProfile, exercise_key: str, reading: bool) -> QuotedFigures:
    """Target key -> (MiB/s, where from) for one exercise: its medians from
    exercises/catalogue/site_figures.py, the same figures every page quotes: its reads or its
    writes (the advisor falls back to writes, and says so)."""
    metric = Metric.READ if reading else Metric.WRITE
    found = site_figures.for_exercise(profile, exercise_key, metric)
    return {key: (f.value, f.source) for key, f in found.items()}


def advice_for(io: JobIO, profile: SiteProfile | None = None, ran: str | None = None) -> JobAdvice:
    """`ran`: for a lab run's own log, the exercise it ran (advise_job names it so)."""
    profile = profile or active_profile()
    return advise_job(
        io,
        target_facts(profile),
        profile.node_memory_gib,
        shapes(profile),
        lambda key, reading: figures(profile, key, reading),
        ran=ran,
    )


def target_facts(profile: SiteProfile) -> list[TargetFacts]:
    """The advisor's view of each target: its properties, whether its data survives
    (redundancy, purge), and the quiet figures a job's I/O is counted by, each with
    its source: the sequential and random write medians of the site's plainest
    streaming and random exercise that has figures (one process writing one file and
    fsyncing it, 1a and 2a, where the site has them), and the file creates of its
    metadata exercise (6), from exercises/catalogue/site_figures.py."""
    figures_of: dict[str, site_figures.SiteFigures] = {}
    for pattern in ("sequential", "random"):
        figures_of[pattern] = first_with_figures(profile, plainest(profile, pattern), Metric.WRITE)
    metadata = [e for e in profile.exercises.all() if e.measures_metadata]
    figures_of["create"] = first_with_figures(profile, metadata, Metric.CREATE)
    ratios = stored_ratios(profile)

    def figure(kind: str, key: str) -> tuple[float | None, str]:
        found = figures_of[kind].get(key)
        return (found.value, found.source) if found else (None, "")

    facts = []
    for t in profile.targets.all():
        sequential, sequential_source = figure("sequential", t.key)
        random, random_source = figure("random", t.key)
        creates, create_source = figure("create", t.key)
        facts.append(
            TargetFacts(
                key=t.key,
                name=t.name,
                in_memory=t.in_memory,
                persistent=t.persistent,
                shared=t.shared,
                use_for=tuple(t.use_for),
                avoid_for=tuple(t.avoid_for),
                sequential_mib_s=sequential,
                random_mib_s=random,
                quota_gib=t.quota_bytes / GiB if t.quota_bytes else None,
                filesystem=t.filesystem,
                spread_directory=t.spread_directory,
                compression=t.compression,
                stored_ratio=ratios.get(t.key),
                redundant=protects(t.redundancy),
                redundancy=t.redundancy,
                purge=t.purge_policy or t.purge_rule,
                sequential_source=sequential_source,
                random_source=random_source,
                create_ops_s=creates,
                create_source=create_source,
            )
        )
    return facts


def first_with_figures(
    profile: SiteProfile, exercises: list[Exercise], metric: Metric
) -> site_figures.SiteFigures:
    """The figures of the first of `exercises` that has some, each source naming the
    exercise ("exercise 1a, measured here by calibration round 3 on ...")."""
    for exercise in exercises:
        found = site_figures.for_exercise(profile, exercise.key, metric)
        if found:
            return {
                key: site_figures.SiteFigure(f.value, f"exercise {exercise.key}, {f.source}")
                for key, f in found.items()
            }
    return {}


def stored_ratios(profile: SiteProfile) -> dict[str, tuple[float, str]]:
    """Target key -> (how many times less space, where from): on each target that
    measures what runs stored, the median ratio of the completed runs of the site's
    first exercise whose data compresses (11a), as their pages show it (2 queries)."""
    packing = next((e for e in profile.exercises.all() if e.compressible), None)
    if packing is None:
        return {}
    rows = RunResult.objects.filter(
        run__exercise=packing,
        run__status=RunStatus.COMPLETED,
        run__target__profile=profile,
        stored_bytes__gt=0,
        held_bytes__isnull=False,
    ).values_list("run__target__key", "held_bytes", "stored_bytes")
    found: dict[str, list[float]] = defaultdict(list)
    for key, held, stored in rows:
        found[key].append(Space(held=held, stored=stored).ratio)
    return {
        key: (
            statistics.median(ratios),
            f"median of {len(ratios)} run{'s' if len(ratios) != 1 else ''} of exercise "
            f"{packing.key} here",
        )
        for key, ratios in found.items()
    }


def plainest(profile: SiteProfile, pattern: str) -> list[Exercise]:
    """The site's exercises of `pattern` that write one file per process and fsync it
    (not many small files, not the page-cache trap), fewest processes first, then in
    the site's order: the yardsticks of that pattern (1a, 2a)."""
    found = [
        e
        for e in profile.exercises.all()
        if e.pattern == pattern and e.files_per_process == 1 and e.fsync and not e.measures_metadata
    ]
    return sorted(found, key=lambda e: e.processes)  # stable: the site's order
