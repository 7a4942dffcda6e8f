"""Canaries: small runs that take the filesystem's weather on every target of the site.

What a canary runs. A reading is set against its target's usual figure, the median
the site's calibration measured there (MeasuredReference). So that the two compare
like with like, a canary runs the workload of a calibrated exercise of the profile,
named by a setting: WEATHER_STREAMING_EXERCISE (the dev site's 1a: one process
streaming a 64 MiB file past the page cache for 2 s) and WEATHER_METADATA_EXERCISE
(the dev site's 6: mdtest, whose file creates per second are the reading). Settings
and not the profile, because which exercise is the site's yardstick is the site's
choice, as SITE_PROFILE itself is, and the profile stays a description of what the
site has, loaded unchanged; the keys differ from site to site (TACC's profile has no
1a), so each site names its own, and an empty one turns that canary off.

Bounded cost. Each canary is cut to at most MAX_SECONDS, MAX_PROCESSES processes,
MAX_FILES_PER_PROCESS files and MAX_BYTES_PER_PROCESS bytes a process (the dev
site's 1a and 6 fit whole, so there a reading is the exercise itself), and a Slurm
time limit of TIME_LIMIT_MINUTES. A target gets one canary of each kind every
WEATHER_MINUTES (at least MIN_MINUTES; 0: none), never two at once (a target with a
canary going gets no other: checked under one lock), and none at all once Slurm
refused one (`refused`) until an administrator's `manage.py weather --once` goes
through; none while a calibration round measures the quiet site, or while the portal's
address for jobs does not answer (a canary could not send its figure). On the dev
cluster a target's two canaries take 7-23 s of its 15 minutes (the command prints
each one's time and its share).

Canaries run as WEATHER_ACCOUNT's cluster account (a portal login with one), through
Slurm like any run, as a calibration round runs as whoever started it: by the rules
every run passes (jobs/admission.py), the account's quota on the target included (a
canary that would not fit is not run, and its reading says why), and the rate limit.
One exemption, named where they start (`slots=False`): canaries are paced here, one
per target at a time, and are no person's runs; they do not wait behind the cap a
person's slots are. Their runs name no exercise, so no class figure, lab median or
advisor figure ever counts a canary as a trainee's run; the reading keeps which
exercise it ran."""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

import httpx
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from exercises.catalogue.models import (
    Exercise,
    MeasuredReference,
    Metric,
    SiteProfile,
    StorageTarget,
)
from exercises.weather.models import Kind, Reading
from jobs.admission import NOT_RUN, Refused, refused_run
from jobs.engines import Workload
from jobs.models import UNFINISHED_STATUSES, BenchmarkRun, RunStatus
from jobs.submission import new_run, start_run
from portal import locks
from portal.models import ClusterAccount
from portal.units import MiB

MAX_SECONDS = 5
MAX_PROCESSES = 8
MAX_FILES_PER_PROCESS = 200
MAX_BYTES_PER_PROCESS = 64 * MiB
TIME_LIMIT_MINUTES = 2
# WEATHER_MINUTES below this is refused at start (portal/settings.py): a target's two
# canaries take seconds, so one round in five minutes is already a few percent of it.
MIN_MINUTES = 5

# Which figure of a canary's result is the reading, and which calibrated metric is
# its usual: a streaming write's MiB/s; for metadata, file creates per second (what
# a metadata server is slowest at and a class's many small files need most; a stat
# is often answered from a cache).
METRIC = {Kind.STREAMING: Metric.WRITE, Kind.METADATA: Metric.CREATE}
SETTING = {
    Kind.STREAMING: "WEATHER_STREAMING_EXERCISE",
    Kind.METADATA: "WEATHER_METADATA_EXERCISE",
}
_LOCK = "storagelab:weather"  # one advisory lock: no two starters decide at once


class WeatherRefused(Exception):
    """No canary was started; the message says why and what to do."""


def account() -> ClusterAccount:
    """WEATHER_ACCOUNT's cluster account, or WeatherRefused saying what to set."""
    name = settings.WEATHER_ACCOUNT
    if not name:
        raise WeatherRefused(
            "WEATHER_ACCOUNT is not set: canaries run as a cluster account of the site's. "
            "Name a portal login that has a linked cluster account."
        )
    user = get_user_model().objects.filter(username=name).first()
    found = ClusterAccount.objects.filter(user=user).first() if user else None
    if found is None:
        raise WeatherRefused(
            f"WEATHER_ACCOUNT {name!r} is no portal login with a cluster account: link one "
            "in the admin (Cluster accounts), or name another login."
        )
    return found


def exercises(profile: SiteProfile) -> dict[Kind, Exercise]:
    """The exercise each kind of canary runs (a kind whose setting is empty has none),
    or WeatherRefused naming a setting that names no fitting exercise (1 query)."""
    named = {kind: getattr(settings, SETTING[kind]) for kind in Kind}
    keys = {kind: key for kind, key in named.items() if key}
    found = {e.key: e for e in profile.exercises.filter(key__in=keys.values())}
    chosen = {}
    for kind, key in keys.items():
        exercise = found.get(key)
        if exercise is None:
            raise WeatherRefused(
                f"{SETTING[kind]} names exercise {key!r}, which {profile.title} does not have."
            )
        if exercise.measures_metadata != (kind == Kind.METADATA):
            what = "file operations (mdtest)" if kind == Kind.METADATA else "a bandwidth"
            raise WeatherRefused(f"{SETTING[kind]}: exercise {key} does not measure {what}.")
        chosen[kind] = exercise
    return chosen


def bounded(workload: Workload) -> Workload:
    """The workload cut to a canary's bounds (unchanged where it fits them)."""
    files = min(workload.files_per_process, MAX_FILES_PER_PROCESS)
    file_size = workload.size_per_process // workload.files_per_process
    file_size = max(workload.block_size, min(file_size, MAX_BYTES_PER_PROCESS // files))
    file_size -= file_size % workload.block_size
    return Workload.model_validate(
        workload.model_dump()
        | {
            "processes": min(workload.processes, MAX_PROCESSES),
            "files_per_process": files,
            "size_per_process": file_size * files,
            "seconds": min(workload.seconds, MAX_SECONDS) if workload.seconds else None,
        }
    )


def refused(profile: SiteProfile) -> Reading | None:
    """The site's latest canary, if Slurm refused it (its run failed before it had a
    job): automatic canaries stop until an administrator's round goes through."""
    latest = (
        Reading.objects.filter(target__profile=profile)
        .select_related("run", "target")
        .order_by("-run__created_at")
        .first()
    )
    if latest and slurm_refused(latest.run):
        return latest
    return None


def slurm_refused(run: BenchmarkRun) -> bool:
    """Whether Slurm refused the canary's run: it failed before it had a job, and not
    by the portal's own rules (a full quota: tried again at its next time)."""
    return (
        run.status == RunStatus.FAILED
        and run.slurm_job_id is None
        and not run.status_reason.startswith(NOT_RUN)
    )


@dataclass(frozen=True)
class Step:
    started: list[Reading]
    going: set[int]  # targets with a canary going (none started there)


Due = Callable[[StorageTarget, Kind, Reading | None], bool]  # (target, kind, its latest)


def step(profile: SiteProfile, due: Due, targets: list[StorageTarget] | None = None) -> Step:
    """Starts, on each target without a canary going, the first kind of canary `due`
    says is due (one per target: the other kind comes once it has ended), and saves
    its reading, pending. Under one lock, so that two starters never put two canaries
    on one target."""
    kinds = exercises(profile)
    runner = account()
    targets = list(profile.targets.all()) if targets is None else targets
    started, going = [], set()
    with transaction.atomic():
        locks.hold(_LOCK)
        pending = set(
            Reading.objects.filter(target__in=targets, figure__isnull=True, problem="").values_list(
                "target_id", flat=True
            )
        )
        latest = _latest(targets)
        usual = _usuals(kinds.values(), targets)
        for target in targets:
            if target.pk in pending:
                going.add(target.pk)
                continue
            for kind, exercise in kinds.items():
                if due(target, kind, latest.get((target.pk, kind))):
                    typical = usual.get((exercise.pk, target.pk, METRIC[kind]))
                    started.append(_start(runner, target, kind, exercise, typical))
                    break
    return Step(started, going)


def _start(
    runner: ClusterAccount,
    target: StorageTarget,
    kind: Kind,
    exercise: Exercise,
    usual: float | None,
) -> Reading:
    """The canary's run and its reading, pending; or, refused by the rules every run
    passes (the account's quota there), a run saved failed and a reading saying why."""
    run = {
        "engine": exercise.runs_with,
        "time_limit_minutes": min(exercise.time_limit_minutes, TIME_LIMIT_MINUTES),
    }
    workload = bounded(exercise.workload)
    problem = ""
    try:
        # Paced here, one per target at a time: the weather account's canaries hold
        # no person's slot and wait behind none (the module's docstring).
        started = start_run(runner, target, workload, slots=False, **run)
    except Refused as refused:
        started = refused_run(new_run(runner, target, workload, **run), str(refused))
        problem = started.status_reason
    return Reading.objects.create(
        target=target, kind=kind, exercise=exercise, run=started, usual=usual, problem=problem
    )


def _latest(targets: list[StorageTarget]) -> dict[tuple[int, str], Reading]:
    """(target id, kind) -> its latest reading, settled or not (1 query)."""
    rows = (
        Reading.objects.filter(target__in=targets)
        .order_by("target_id", "kind", "-taken_at")
        .distinct("target_id", "kind")
    )
    return {(r.target_id, r.kind): r for r in rows}


def _usuals(chosen, targets: list[StorageTarget]) -> dict[tuple[int, int, str], float]:
    """(exercise id, target id, metric) -> the calibration's median (1 query)."""
    rows = MeasuredReference.objects.filter(
        exercise__in=list(chosen), target__in=targets, metric__in=list(METRIC.values())
    ).values_list("exercise_id", "target_id", "metric", "median")
    return {(e, t, m): median for e, t, m, median in rows}


def due_by_schedule(now) -> Due:
    """Beat's rule: a kind is due on a target when its latest canary was started
    WEATHER_MINUTES ago or more."""
    every = timedelta(minutes=settings.WEATHER_MINUTES)
    return lambda target, kind, latest: latest is None or latest.taken_at <= now - every


def calibrating() -> bool:
    """A calibration round has runs going: it measures the quiet site, and a canary
    beside it would be in its figures (1 query)."""
    return BenchmarkRun.objects.filter(
        calibration__isnull=False, status__in=UNFINISHED_STATUSES
    ).exists()


def portal_answers() -> bool:
    """Whether the address jobs post their output to (PORTAL_CALLBACK_URL) answers,
    whatever it says. A canary started while the web server is away (a portal being
    deployed, a dev machine's workers left running after `make demo`) would retry its
    post for RESULT_RETRY_SECONDS, hold a node's core meanwhile, and hold the account's
    next canaries behind it (RUNS_IN_TURN)."""
    try:
        httpx.head(settings.PORTAL_CALLBACK_URL, timeout=3)
    except httpx.HTTPError:
        cache.set(_NO_PORTAL, timezone.now(), timeout=settings.WEATHER_MINUTES * 60 * 2)
        return False
    cache.delete(_NO_PORTAL)
    return True


_NO_PORTAL = "weather:portal-did-not-answer"  # when, for the status sentence


def start_due(profile: SiteProfile) -> Step | None:
    """Beat's turn: the canaries due now, unless the weather is off (WEATHER_MINUTES
    0, no WEATHER_ACCOUNT), stopped (Slurm refused the latest canary), or waits for a
    calibration round to end or for the portal to answer its jobs."""
    if not (settings.WEATHER_MINUTES and settings.WEATHER_ACCOUNT) or refused(profile):
        return None
    if calibrating():
        return None
    due = due_by_schedule(timezone.now())
    # The portal is asked only when a canary is due: once a round, not every beat.
    if not _any_due(profile, due) or not portal_answers():
        return None
    return step(profile, due)


def _any_due(profile: SiteProfile, due: Due) -> bool:
    """Whether `due` says any canary is due on any target (1 query)."""
    targets = list(profile.targets.all())
    latest = _latest(targets)
    return any(due(t, kind, latest.get((t.pk, kind))) for t in targets for kind in Kind)


def status(profile: SiteProfile) -> str:
    """Whether canaries are running, in a sentence (the command, the staff's page)."""
    if not settings.WEATHER_MINUTES:
        return "Off: WEATHER_MINUTES is 0, so no canary starts by itself."
    if not settings.WEATHER_ACCOUNT:
        return "Off: WEATHER_ACCOUNT is not set, so no canary starts by itself."
    if stop := refused(profile):
        at = timezone.localtime(stop.run.created_at)
        return (
            f"Stopped: Slurm refused the canary on {stop.target.name} at {at:%Y-%m-%d %H:%M} "
            f"({stop.run.status_reason or 'no reason given'}). No canary starts by itself "
            "until an administrator's `manage.py weather --once` goes through."
        )
    if calibrating():
        return "Waiting: a calibration round is measuring the quiet site; canaries wait for it."
    if since := cache.get(_NO_PORTAL):
        return (
            f"Waiting: the portal's address for jobs ({settings.PORTAL_CALLBACK_URL}) did not "
            f"answer at {timezone.localtime(since):%H:%M}, so no canary could send its figure; "
            "they start again once it answers."
        )
    return (
        f"On: every {settings.WEATHER_MINUTES} minutes a canary of each kind on each target, "
        f"as {settings.WEATHER_ACCOUNT}'s cluster account."
    )
