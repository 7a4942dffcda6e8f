"""What the runs panel says of my figures: whether my latest runs show the exercise's
lesson (its claims), what stood in its way where they do not, and what the figures say
in words chosen from them (its findings): from one query of my latest run on each side,
and the site's quiet figures each web process keeps (exercises/catalogue/site.py)."""

from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import OuterRef, Subquery

from exercises.catalogue import findings, lessons
from exercises.catalogue.models import Exercise, MeasuredReference, Metric
from exercises.catalogue.quiet import Quiet, Shared
from exercises.catalogue.site import Site
from exercises.weather import pages as weather_pages
from jobs.company import company, company_sql
from jobs.figures import figure, series_figures, shown
from jobs.models import BenchmarkRun, RunResult, RunStatus
from jobs.stored import kept

WRITE = "write_bytes_per_s"


def lesson(exercise: Exercise, user: AbstractBaseUser) -> list[lessons.Verdict]:
    """Whether my latest completed run on each side of the exercise's claims shows its
    lesson (1 query; none for an exercise that claims nothing)."""
    claims = lessons.claims_of(exercise)
    latest = latest_figures(exercise, user, lessons.sides(claims)).figures
    return lessons.judge(claims, latest.get)


@dataclass(frozen=True)
class Latest:
    """My latest completed run's figure of each side, and what stood in their way: the
    sides whose run shared its target and paid for it, and each side's run (for the
    weather while it went)."""

    figures: dict[lessons.Side, float]
    crowded: dict[lessons.Side, lessons.Crowd]
    runs: dict[lessons.Side, BenchmarkRun]


def latest_figures(
    exercise: Exercise,
    user: AbstractBaseUser,
    sides: set[lessons.Side],
    names: dict[str, str] | None = None,
) -> Latest:
    """My latest completed run's figure of each of `sides` (a claim's or a finding's),
    with what it shared and its quiet figure read with it (1 query; none without
    sides). `names`: target key -> name."""
    latest: dict[lessons.Side, float] = {}
    crowded: dict[lessons.Side, lessons.Crowd] = {}
    runs: dict[lessons.Side, BenchmarkRun] = {}
    if not sides:
        return Latest(latest, crowded, runs)
    quiet = MeasuredReference.objects.filter(
        exercise_id=OuterRef("run__exercise_id"),
        target_id=OuterRef("run__target_id"),
        metric=Metric.WRITE,
    ).values("median")[:1]
    rows = (
        RunResult.objects.plausible(WRITE)
        .filter(
            run__user=user,
            run__calibration=None,
            run__status=RunStatus.COMPLETED,
            run__exercise__profile_id=exercise.profile_id,
            run__exercise__key__in={s.exercise for s in sides},
            run__target__key__in={s.target for s in sides},
        )
        .annotate(company_found=company_sql(), quiet=Subquery(quiet))
        # The newest per exercise and target (PostgreSQL's DISTINCT ON).
        .order_by("run__exercise__key", "run__target__key", "-run__created_at")
        .distinct("run__exercise__key", "run__target__key")
        .values_list(
            "run__exercise__key",
            "run__target__key",
            WRITE,
            "processes",
            "company_found",
            "quiet",
            "series",
            "held_bytes",
            "stored_bytes",
            "run_id",
            "run__target_id",
            "run__engine",
            "run__created_at",
            "run__started_at",
            "run__ended_at",
        )
    )
    for row in rows:
        exercise_key, target_key, bytes_per_s, processes, found, median, series = row[:7]
        held, stored, run_id, target_id, engine, created, started, ended = row[7:]
        run = lessons.Side(exercise_key, target_key)
        # The run's figure, a sweep's at each size a side names, its space.
        by_size = dict(series_figures(series, processes))
        run_figure = figure(WRITE, bytes_per_s, processes)
        took = kept(held, stored)
        of_run = {s: s.figure(run_figure, by_size, took) for s in sides if s.run == run}
        latest |= of_run
        # Enough of the run for the weather's nearest reading (weather/pages.py).
        benchmark = BenchmarkRun(
            pk=run_id,
            target_id=target_id,
            engine=engine,
            created_at=created,
            started_at=started,
            ended_at=ended,
        )
        runs |= dict.fromkeys(of_run, benchmark)
        if (had := company(found)) is not None:
            said = Shared(
                target=(names or {}).get(target_key, target_key),
                nodes="",
                company=had,
                figure=run_figure,
                quiet=Quiet(median) if median is not None else None,
            )
            if said.crowd is not None:
                # Sharing slows a run, it does not change what its files took.
                crowded |= dict.fromkeys((s for s in of_run if not s.space), said.crowd)
    return Latest(latest, crowded, runs)


@dataclass(frozen=True)
class Lesson:
    """What the runs panel says of my runs: the lesson's lines and verdicts, and the
    exercise's findings in the words my figures (else the site's quiet ones) pick."""

    lines: list[lessons.Line]
    verdicts: list[lessons.Verdict]
    findings: list[findings.Said]


def lesson_lines(exercise_site: Site, user: AbstractBaseUser, measured: bool = True) -> Lesson:
    """The lesson as the runs panel says it, and its verdicts (my latest figures of
    each claim's sides), and the findings, from one query of my latest figures; the
    site's quiet figures are the kept site's (exercises/catalogue/site.py). Where a
    claim does not show in my figures, the storage's weather while its runs went (1
    query each such run) and, where a run of it shared and paid for it, which exercise
    teaches the spread (1 query more, only then). `measured`: False when none of my
    runs of it has a figure yet (nothing_measured): a lesson that names no other
    exercise then says "not yet" without asking the database."""
    exercise = exercise_site.exercise
    names = {t.key: t.name for t in exercise_site.targets}
    claims = lessons.claims_of(exercise)
    found = findings.findings_of(exercise)
    sides = lessons.sides(claims) | findings.sides(found)
    if not measured and all(side.exercise == exercise.key for side in sides):
        latest = Latest({}, {}, {})
    else:
        latest = latest_figures(exercise, user, sides, names)
    quiet = exercise_site.quiet
    verdicts = lessons.judge(claims, latest.figures.get)
    spread = lessons.spread_exercise(exercise.profile.exercises.all()) if latest.crowded else None
    lines = []
    for verdict in verdicts:
        (on_quiet,) = lessons.judge([verdict.claim], quiet.figure)
        c = verdict.claim
        weather = {}
        if verdict.holds is False and not c.faster.space:
            weather = _weather_then([c.faster, c.slower], latest, names)
        sources = dict.fromkeys(quiet.source(s) for s in (c.faster, c.slower))
        beside = lessons.Beside(
            crowded=latest.crowded,
            weather=weather,
            quiet=on_quiet,
            quiet_source="; ".join(s for s in sources if s),
            spread=spread,
        )
        lines.append(lessons.line(verdict, names, beside))
    said = [findings.said(f, latest.figures.get, quiet.figure, quiet.source, names) for f in found]
    return Lesson(lines, verdicts, said)


def _weather_then(
    sides: list[lessons.Side], latest: Latest, names: dict[str, str]
) -> dict[lessons.Side, str]:
    """For each side whose run a canary read slow while it went, a sentence (1 query a
    run)."""
    said = {}
    for side in sides:
        run = latest.runs.get(side)
        if run is None or side in latest.crowded:
            continue
        reading = weather_pages.nearest(run)
        if reading is None or not reading.usual or not reading.figure:
            continue
        ratio = reading.figure / reading.usual
        if ratio < weather_pages.USUAL:
            target = names.get(side.target, side.target)
            said[side] = (
                f"The storage's weather while your run of {lessons.side_name(side, names)} "
                f"went: {target}'s canary read {weather_pages.percent(ratio)} of its usual "
                f"{shown(reading.usual)} {weather_pages.UNIT[reading.kind]}, so the target "
                "itself was slow then."
            )
    return said
