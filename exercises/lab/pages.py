"""What the lab pages show: my progress, and the figures
to compare per exercise. Query counts stay bounded whatever the number of runs."""

import contextlib
import json
import time
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.cache import cache
from django.db import connection
from django.db.models import Q
from django.utils import timezone
from redis.exceptions import RedisError

from exercises.catalogue import figures
from exercises.catalogue.figures import Figures
from exercises.catalogue.models import (
    RATE_METRICS,
    RESULT_FIELD,
    Exercise,
    MeasuredReference,
    ReferenceResult,
    SiteProfile,
    StorageTarget,
)
from exercises.catalogue.profiles import active_profile
from exercises.catalogue.quiet import shared, site_quiet
from exercises.catalogue.site import SITE_HASH, Site, site, site_of_key
from jobs.company import annotated, company
from jobs.models import UNFINISHED_STATUSES, BenchmarkRun, RunResult, RunStatus
from jobs.models import Rates as RunRates
from jobs.stored import Space
from portal.errors import NotFound
from portal.units import iec

WRITE = "write_bytes_per_s"


def get_exercise(key: str) -> Exercise:
    """The active profile's exercise `key`, its profile with it (1 query)."""
    exercise = (
        Exercise.objects.select_related("profile")
        .filter(profile__name=settings.SITE_PROFILE, key=key)
        .first()
    )
    if exercise is None:
        profile = active_profile()  # says so when the profile itself is missing
        raise NotFound(f"There is no exercise {key!r} in the {profile.title} lab.")
    return exercise


@dataclass
class Progress:
    exercise: Exercise
    targets_done: int
    targets_total: int

    @property
    def complete(self) -> bool:
        return self.targets_done >= self.targets_total > 0


def progress(profile: SiteProfile, user: AbstractBaseUser) -> list[Progress]:
    exercises = list(profile.exercises.all())
    total = profile.targets.count()
    done_pairs = (
        BenchmarkRun.objects.filter(
            user=user,
            exercise__profile=profile,
            calibration=None,
            status=RunStatus.COMPLETED,
            result__isnull=False,
        )
        .values_list("exercise_id", "target_id")
        .distinct()
    )
    done: dict[int, int] = defaultdict(int)
    for exercise_id, _ in done_pairs:
        done[exercise_id] += 1
    return [Progress(e, done[e.pk], total) for e in exercises]


def comparison(user: AbstractBaseUser, panel: "PanelState", measured: bool = True) -> list[Figures]:
    """Per target of the site: my runs, the class's (everyone's runs in the courses
    I joined, as of the panel's last class refresh) and the site's references
    (1 query, 2 when the class's figures are not in the cache; the site's rows are
    kept, exercises/catalogue/site.py). `measured`: False when none of my runs of it
    has a figure yet (nothing_measured), which saves the query of mine."""
    exercise_site = site_of(panel)
    exercise = exercise_site.exercise
    mine = RunResult.objects.filter(run__exercise=exercise, run__user=user, run__calibration=None)
    rows = figures.table(
        [exercise],
        exercise_site.targets,
        mine=figures.run_figures(mine) if measured else {},
        trainees=classmates(exercise, panel, user),
        references=exercise_site.references,
    )
    return list(rows.values())


@dataclass
class Rate:
    """One file operation on one target: the median of my runs, the site's measured
    median and its published figure (per second, all processes together)."""

    mine: float | None
    measured: float | None
    published: ReferenceResult | None


@dataclass
class Rates:
    exercise: Exercise
    target: StorageTarget
    runs: int
    rates: list[Rate]  # in the order of RATE_METRICS
    unmeasured: str = ""  # as Figures.unmeasured

    @property
    def has_measured(self) -> bool:
        return any(rate.measured is not None for rate in self.rates)


def rates(exercise: Exercise, user: AbstractBaseUser, rows: list[Figures]) -> list[Rates]:
    """For a metadata exercise, per target of `rows` (the comparison, which carries
    the published figures): my rates and the site's measured ones (2 queries)."""
    mine = RunResult.objects.filter(
        run__exercise=exercise, run__user=user, run__calibration=None
    ).rates_by_target()
    measured: dict[tuple[int, str], float] = {
        (target_id, metric): median
        for target_id, metric, median in MeasuredReference.objects.filter(
            exercise=exercise, metric__in=RATE_METRICS
        ).values_list("target_id", "metric", "median")
    }
    nothing = RunRates(runs=0, medians={})
    return [
        Rates(
            exercise=exercise,
            target=row.target,
            runs=mine.get(row.target.pk, nothing).runs,
            rates=[
                Rate(
                    mine=mine.get(row.target.pk, nothing).medians.get(RESULT_FIELD[metric]),
                    measured=measured.get((row.target.pk, metric.value)),
                    published=row.published.get(metric.value),
                )
                for metric in RATE_METRICS
            ],
        )
        for row in rows
    ]


MY_RUNS_SHOWN = 20


def my_runs(
    exercise: Exercise, user: AbstractBaseUser, limit: int = MY_RUNS_SHOWN
) -> list[BenchmarkRun]:
    """My latest runs of `exercise`, each with what it shared (jobs/company.py: read in
    the same query)."""
    runs = (
        # A calibration's runs are the site's (the calibration page follows them).
        BenchmarkRun.objects.filter(exercise=exercise, user=user, calibration=None)
        .select_related("target", "result")
        .defer("job_script", "workload", "raw_output")  # the panel shows none of them
        .order_by("-created_at")[:limit]
    )
    return list(annotated(runs))


def nothing_measured(runs: list[BenchmarkRun]) -> bool:
    """Whether `runs` (my_runs) are all my runs of their exercise and none has a
    figure: a trainee's first look and first start, which a class makes at once.
    Then the queries of my figures and my lesson would find nothing (no query)."""
    return len(runs) < MY_RUNS_SHOWN and not any(getattr(r, "result", None) for r in runs)


@dataclass(frozen=True)
class Compressed:
    """Beside an exercise whose data compresses: the site's published figures of
    compression algorithms on its data, and what my latest run on each target that
    compresses stored (its name, what it compresses with, the space)."""

    published: list[dict]  # SiteProfile.compression
    mine: list[tuple[str, str, Space]]


def compressed(exercise: Exercise, runs: list[BenchmarkRun]) -> Compressed | None:
    """For an exercise of data that compresses (Exercise.compressible), from my_runs
    (no query); None for any other."""
    if exercise.compressible is None:
        return None
    mine: dict[int, tuple[str, str, Space]] = {}
    for run in runs:  # newest first
        result = getattr(run, "result", None)
        if run.status == RunStatus.COMPLETED and result and result.space:
            mine.setdefault(run.target_id, (run.target.name, run.target.compression, result.space))
    return Compressed(exercise.profile.compression, list(mine.values()))


@dataclass
class Sweep:
    """My latest sweep of request sizes on each target (Workload.block_sizes): the
    chart's data, and the same figures as a table's rows."""

    sizes: list[int]
    rows: list[tuple[StorageTarget, list[float | None]]]  # MiB/s per size, in `sizes`' order

    @property
    def chart(self) -> dict:
        """For static/js/charts.js: a column per size, a line per target."""
        return {
            "labels": [iec(size) for size in self.sizes],
            "x_title": "request size",
            "series": [
                # To 0.1 MiB/s, as the table and the tooltips show them.
                {"name": t.key, "label": t.name, "kind": "sweep", "values": _tenths(values)}
                for t, values in self.rows
            ],
        }


def _tenths(values: list[float | None]) -> list[float | None]:
    return [None if v is None else round(v, 1) for v in values]


def sweep(exercise: Exercise, runs: list[BenchmarkRun]) -> Sweep | None:
    """For a sweep exercise, my latest completed run's figures per target, from `runs`
    (my_runs, newest first, each with its result: no query); None for the others."""
    sizes = list(exercise.block_sizes or ())
    if not sizes:
        return None
    latest: dict[int, BenchmarkRun] = {}
    for run in runs:
        result = getattr(run, "result", None)
        if run.status == RunStatus.COMPLETED and result and result.series:
            latest.setdefault(run.target_id, run)
    rows = []
    for run in sorted(latest.values(), key=lambda r: (r.target.order, r.target.key)):
        by_size = dict(run.result.series_mib_s)
        rows.append((run.target, [by_size.get(size) for size in sizes]))
    return Sweep(sizes, rows)


def say_shared(runs: list[BenchmarkRun], site_of_runs: Site) -> None:
    """Sets `shared` on each run of `runs`: for a completed one, its company and its
    figure against the quiet figure of the site's references (quiet.Shared); None for
    the others (no query)."""
    quiets = site_quiet(site_of_runs.references)
    for run in runs:
        run.shared = None
        if run.status == RunStatus.COMPLETED:
            result = getattr(run, "result", None)
            figure_of_run = result.write_mib_s if result else None
            run.shared = shared(run, company(run), quiets, figure_of_run)


def target_figures(target: StorageTarget, user: AbstractBaseUser) -> list[Figures]:
    """Per exercise: what I measured on this target, and the site's reference."""
    mine = RunResult.objects.filter(run__target=target, run__user=user, run__calibration=None)
    rows = figures.table(target.profile.exercises.all(), [target], mine=figures.run_figures(mine))
    return list(rows.values())


def get_target(profile: SiteProfile, key: str) -> StorageTarget:
    target = profile.targets.filter(key=key).first()
    if target is None:
        raise NotFound(f"There is no storage target {key!r} at {profile.title}.")
    return target


# What the runs panel shows depends on, in SQL: a class polls it about 100 times a
# second, and the ORM spent three times the database's own time building this query.
# The exercise is found by its key, so that an unchanged panel costs this one query.
PANEL_STATE_SQL = f"""
    SELECT e.id, {SITE_HASH}, mine.n, mine.latest, classmates.n, classmates.newest,
           classmates.mine_new, courses.ids,
           class_going.going,
           -- My prediction of it (exercises/predictions), to set beside my runs:
           -- its order, its figures and its answers against other exercises.
           (SELECT json_build_array(pr."order", pr.figures, pr.against)::text
            FROM predictions_prediction pr
            WHERE pr.exercise_id = e.id AND pr.user_id = %(user)s) AS prediction
    FROM exercises_exercise e
    JOIN exercises_siteprofile p ON p.id = e.profile_id
    CROSS JOIN LATERAL (
        SELECT array_agg(course_id ORDER BY course_id) AS ids
        FROM exercises_enrollment WHERE user_id = %(user)s
    ) courses
    CROSS JOIN LATERAL (
        SELECT count(*) AS n, max(updated_at) AS latest
        FROM jobs_benchmarkrun WHERE exercise_id = e.id AND user_id = %(user)s
    ) mine
    CROSS JOIN LATERAL (
        SELECT count(result.id) AS n, max(result.id) AS newest,
               count(result.id) FILTER (WHERE result.created_at > %(class_cutoff)s) AS mine_new
        FROM jobs_runresult result JOIN jobs_benchmarkrun run ON run.id = result.run_id
        WHERE run.exercise_id = e.id
          AND run.course_id = ANY(courses.ids)
          AND run.status = 'completed'
          AND result.write_bytes_per_s IS NOT NULL
          -- The class's figures as of the last class refresh, and mine at once: my
          -- panel redraws for them anyway, and may poll no more after my last run.
          AND (result.created_at <= %(class_cutoff)s OR run.user_id = %(user)s)
    ) classmates
    CROSS JOIN LATERAL (
        -- Whether anyone in my courses still has a run of it going: stops at the first.
        SELECT EXISTS (
            SELECT 1 FROM jobs_benchmarkrun
            WHERE exercise_id = e.id AND course_id = ANY(courses.ids)
              AND status = ANY(%(unfinished)s)
        ) AS going
    ) class_going
    WHERE p.name = %(profile)s AND e.key = %(key)s
"""  # noqa: S608 (SITE_HASH is a constant)


@dataclass(frozen=True)
class PanelState:
    """What my runs panel of an exercise shows depends on: my runs (how many, their
    last change), the class's results as of the last class refresh (how many, the
    newest) in the courses I joined, and the site's rows (exercises/catalogue/site.py)."""

    exercise_id: int
    site: str
    mine: str
    classmates: str
    courses: tuple[int, ...]
    class_cutoff: datetime
    class_going: bool = False  # someone in my courses has a run of it going
    prediction: tuple[str, ...] | None = None  # my prediction's target keys, fastest first
    guesses: tuple[tuple[str, float], ...] = ()  # its MiB/s per target key, where I gave one
    # Its answers against other exercises ("8a/work", "faster"): predictions/versus.py.
    against: tuple[tuple[str, str], ...] = ()
    mine_changed_at: datetime | None = None  # the last change to a run of mine

    @property
    def closely(self) -> bool:
        """Whether a run of mine changed within RUN_FOLLOW_SECONDS: the panel follows
        every 2 s, else every WAITING_POLL_SECONDS (runs that only wait change seldom;
        their next change brings the 2 s back)."""
        since = timezone.now() - timedelta(seconds=settings.RUN_FOLLOW_SECONDS)
        return self.mine_changed_at is not None and self.mine_changed_at >= since

    @property
    def version(self) -> str:
        """Changes whenever the panel would: any change to my runs, at once; the
        class's results, every CLASS_REFRESH_SECONDS. While a class of 200 runs,
        results come in every second: redrawing every panel for each would cost the
        portal more than everything else, and the class median needs no such haste.
        A classmate's run being submitted or started changes nothing I see. An edit
        of the site's targets or references, or a calibration, shows at once."""
        going = "g" if self.class_going else "s"  # the class's end stops the polls
        pace = "c" if self.closely else "w"  # the pace is in the markup: a change redraws
        return f"{self.mine}-{self.classmates}-{going}{pace}-{self.site[:12]}"


def panel_state(key: str, user: AbstractBaseUser) -> PanelState:
    """The runs panel's state of the active profile's exercise `key` (1 query), or
    a 404 that says why (get_exercise)."""
    cutoff = _class_cutoff(user)
    params = {
        "user": user.pk,
        "profile": settings.SITE_PROFILE,
        "key": key,
        "class_cutoff": cutoff,
        "unfinished": [str(status) for status in UNFINISHED_STATUSES],
    }
    with connection.cursor() as cursor:
        cursor.execute(PANEL_STATE_SQL, params)
        row = cursor.fetchone()
    if row is None:
        get_exercise(key)  # raises the 404 that says what is missing
    exercise_id, site_hash, mine, latest, results, newest_result, mine_new, courses = row[:8]
    class_going, made = row[8:]
    # Raw SQL: the JSON comes as text (Django decodes JSON fields, not psycopg).
    order, guesses, against = json.loads(made) if made else (None, None, None)
    return PanelState(
        exercise_id=exercise_id,
        site=site_hash,
        mine=f"{mine}-{latest.timestamp() if latest else 0}",
        # With figures of mine newer than the refresh, the class's figures are mine
        # alone to share: the user says whose they are.
        classmates=f"{results}-{newest_result or 0}" + (f"-u{user.pk}" if mine_new else ""),
        courses=tuple(courses or ()),
        class_cutoff=cutoff,
        class_going=bool(class_going),
        prediction=tuple(order) if order else None,
        guesses=tuple(sorted((guesses or {}).items())),
        against=tuple(sorted((against or {}).items())),
        mine_changed_at=latest,
    )


def site_of(panel: PanelState) -> Site:
    """The exercise of the panel, its targets and the site's references for it."""
    return site(panel.exercise_id, panel.site)


def exercise_site(key: str) -> Site:
    """The same for the active profile's exercise `key`, without the panel's state
    (1 query, where the state query costs a few ms), or a 404 that says why."""
    found = site_of_key(settings.SITE_PROFILE, key)
    if found is None:
        get_exercise(key)  # raises the 404 that says what is missing
    return found


def _class_cutoff(user: AbstractBaseUser) -> datetime:
    """The last refresh of the class figures for this user. Each user's refreshes
    are offset by their id, so 200 panels do not redraw in the same second."""
    period = settings.CLASS_REFRESH_SECONDS
    if period <= 0:
        return timezone.now()
    offset = user.pk % period
    now = time.time()
    return datetime.fromtimestamp((now - offset) // period * period + offset, UTC)


# Long enough to outlive a few class refreshes; an entry is never stale (its key says
# which results it holds), this only frees the cache of old ones.
CLASS_FIGURES_CACHE_SECONDS = 120


def classmates(exercise: Exercise, panel: PanelState, user: AbstractBaseUser) -> figures.Values:
    """The class's write MiB/s for `exercise` as the panel's state counts them: each
    trainee's median over their runs in my courses, up to the last class refresh, and
    mine up to now. Kept in the cache (1 query, none when cached): a class of 200
    shares a handful of answers per refresh, where each panel's redraw used to ask
    the database."""
    if not panel.courses:
        return {}
    courses = ".".join(map(str, panel.courses))
    key = f"class-medians:{exercise.pk}:{courses}:{panel.classmates}"
    with contextlib.suppress(RedisError):  # no cache: the database still answers
        if (cached := cache.get(key)) is not None:
            return cached
    results = RunResult.objects.filter(
        Q(created_at__lte=panel.class_cutoff) | Q(run__user=user),
        run__exercise=exercise,
        run__course__in=panel.courses,
    )
    values = figures.trainee_medians(results)
    with contextlib.suppress(RedisError):
        cache.set(key, values, CLASS_FIGURES_CACHE_SECONDS)
    return values
