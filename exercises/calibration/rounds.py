"""Site calibration: the portal runs every exercise on every target of a site
`repeat` times and keeps the median, lowest and highest figure of each as the site's
measured reference (MeasuredReference), beside the figures the site published.

A round (Calibration) is started by someone with a cluster account: its runs are
theirs, made with jobs.submission.start_run like any other. It is paced: at most
CALIBRATION_PARALLEL of its runs are going at once, and the next ones are made only
when a slot frees up (`advance`, which beat's advance_calibrations calls every few
seconds and `calibrate --wait` calls too). So a round never fills Slurm's queue
ahead of the users, and its runs measure the storage, not each other. Runs go round
by round over the plan (every pair once, then every pair a second time...), so
repeats of one pair are spread over the round's time.

Which exercises and targets a round measures (its plan) is kept on its row, and
said in plain words as the first line of its summary, so the round needs no more
than its row to go on after a restart. Only one round per site profile is going at
a time. When every run has ended (and a completed one's output is in), the figures
are kept: a pair's later round replaces an earlier one's; a run that failed or
gave no figure is counted in the summary, never in the figures; a pair with no
figure at all keeps what it had.
"""

import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from exercises.calibration.band import kept_out
from exercises.calibration.models import Calibration
from exercises.catalogue.models import (
    BANDWIDTH_METRICS,
    RATE_METRICS,
    RESULT_FIELD,
    Exercise,
    MeasuredReference,
    Metric,
    SiteProfile,
    StorageTarget,
)
from exercises.lab.start import exercise_run, start_exercise_run
from jobs.admission import NOT_RUN, Refused, refused_run
from jobs.engines import get_engine
from jobs.figures import shown
from jobs.models import ACTIVE_STATUSES, BenchmarkRun, RunStatus
from jobs.stored import Space
from jobs.submission import cancel_all
from portal.models import ClusterAccount

MAX_REPEAT = 20

Pair = tuple[Exercise, StorageTarget]


class CalibrationRefused(Exception):
    """Nothing was started or changed; the message says why and what to do."""


def current_round(profile: SiteProfile) -> Calibration | None:
    """The profile's round still going, if any."""
    return profile.calibrations.filter(finished_at__isnull=True).first()


def may_calibrate(user: AbstractBaseUser) -> bool:
    """Staff, and those given "Can calibrate the site" (calibration.run_calibration)."""
    return user.is_staff or user.has_perm("calibration.run_calibration")


def may_cancel(user: AbstractBaseUser, calibration: Calibration) -> bool:
    """Who started the round, and staff."""
    return user.is_staff or calibration.started_by_id == user.pk


def start_round(
    user: AbstractBaseUser,
    profile: SiteProfile,
    *,
    repeat: int,
    exercise_keys: list[str] | None = None,
    target_keys: list[str] | None = None,
    then_exercise_keys: list[str] | None = None,
    then_repeat: int | None = None,
) -> Calibration:
    """Starts a round of `profile` run as `user`'s cluster account, and its first
    runs; the exercises and targets named (all of them by default). `then_exercise_keys`:
    the exercises of a round that follows it on the same targets, started as it ends,
    `then_repeat` times each (by default, as this one)."""
    if not may_calibrate(user):
        raise CalibrationRefused(
            f"{user.get_username()} may not calibrate the site: a round runs every exercise "
            "on every target several times, and its figures become the site's reference. "
            'Staff do it, or whom they give the permission "Can calibrate the site".'
        )
    for times in (repeat, then_repeat or repeat):
        if not 1 <= times <= MAX_REPEAT:
            raise CalibrationRefused(f"Repeat each run 1 to {MAX_REPEAT} times, not {times}.")
    account = _account_of(user)
    exercises = _chosen(profile.exercises.all(), exercise_keys, "exercise", profile)
    targets = _chosen(profile.targets.all(), target_keys, "target", profile)
    then = (
        _chosen(profile.exercises.all(), then_exercise_keys, "exercise", profile)
        if then_exercise_keys
        else []
    )
    with transaction.atomic():
        # Holding the profile's row: two starts at once cannot both find no round going.
        SiteProfile.objects.select_for_update().get(pk=profile.pk)
        going = current_round(profile)
        if going is not None:
            raise CalibrationRefused(
                f"Calibration round {going.pk} of {profile.title} is still going (started "
                f"{timezone.localtime(going.started_at):%Y-%m-%d %H:%M}). Wait for it to end, "
                "or cancel it on the calibration page, then start again."
            )
        calibration = Calibration.objects.create(
            profile=profile,
            started_by=user,
            repeat=repeat,
            exercise_keys=[e.key for e in exercises],
            target_keys=[t.key for t in targets],
            then_exercise_keys=[e.key for e in then],
            then_repeat=then_repeat if then else None,
            summary=_plan_line(exercises, targets, repeat),
        )
        _start_next(calibration, account, [], [(e, t) for e in exercises for t in targets])
    return calibration


def unmeasured(
    profile: SiteProfile, exercise_keys: list[str] | None, target_keys: list[str] | None
) -> list[str]:
    """Of the exercises named (all by default), in the site's order, those without a
    measured reference on some of the targets named (all by default) (2 queries)."""
    exercises = [
        key
        for key in profile.exercises.values_list("key", flat=True)
        if not exercise_keys or key in exercise_keys
    ]
    targets = {
        key
        for key in profile.targets.values_list("key", flat=True)
        if not target_keys or key in target_keys
    }
    measured = set(
        MeasuredReference.objects.filter(exercise__profile=profile).values_list(
            "exercise__key", "target__key"
        )
    )
    return [key for key in exercises if any((key, t) not in measured for t in targets)]


def _account_of(user: AbstractBaseUser | None) -> ClusterAccount:
    account = ClusterAccount.objects.filter(user=user).first() if user else None
    if account is None:
        name = user.get_username() if user else "whoever started it"
        raise CalibrationRefused(
            f"{name} has no cluster account, and a calibration's jobs run as one. Link one "
            "to this login in the admin (Cluster accounts), or calibrate as someone who has one."
        )
    return account


def _chosen(rows, keys: list[str] | None, what: str, profile: SiteProfile) -> list:
    rows = list(rows)
    if not rows:
        raise CalibrationRefused(f"{profile.title} has no {what}s to calibrate.")
    if not keys:
        return rows
    by_key = {row.key: row for row in rows}
    unknown = [key for key in keys if key not in by_key]
    if unknown:
        raise CalibrationRefused(
            f"{profile.title} has no {what} {', '.join(unknown)}; its {what}s are "
            f"{', '.join(by_key)}."
        )
    return [by_key[key] for key in dict.fromkeys(keys)]


def _plan_line(exercises: list[Exercise], targets: list[StorageTarget], repeat: int) -> str:
    total = len(exercises) * len(targets) * repeat
    return (
        f"Plan: exercises {', '.join(e.key for e in exercises)}; "
        f"targets {', '.join(t.key for t in targets)}; ×{repeat}, {total} runs."
    )


def planned_pairs(calibration: Calibration) -> list[Pair]:
    """The round's exercises on its targets, in the plan's order (2 queries). An
    exercise or target taken out of the profile since is left out."""
    exercise_keys, target_keys = calibration.exercise_keys, calibration.target_keys
    exercises = {e.key: e for e in calibration.profile.exercises.filter(key__in=exercise_keys)}
    targets = {t.key: t for t in calibration.profile.targets.filter(key__in=target_keys)}
    return [
        (exercises[e], targets[t])
        for e in exercise_keys
        if e in exercises
        for t in target_keys
        if t in targets
    ]


def next_pairs(pairs: list[Pair], started: Counter, repeat: int, free: int) -> list[Pair]:
    """The pairs whose next run comes now, at most `free`: every pair once, then
    every pair a second time, and so on up to `repeat`."""
    started = Counter(started)
    chosen: list[Pair] = []
    for turn in range(repeat):
        for exercise, target in pairs:
            if len(chosen) >= free:
                return chosen
            if started[(exercise.pk, target.pk)] <= turn:
                started[(exercise.pk, target.pk)] += 1
                chosen.append((exercise, target))
    return chosen


def _start_next(
    calibration: Calibration,
    account: ClusterAccount,
    runs: list[BenchmarkRun],
    pairs: list[Pair],
) -> list[BenchmarkRun]:
    going = sum(run.status in ACTIVE_STATUSES for run in runs)
    started = Counter((run.exercise_id, run.target_id) for run in runs)
    free = settings.CALIBRATION_PARALLEL - going
    started_runs = []
    for exercise, target in next_pairs(pairs, started, calibration.repeat, free):
        try:
            # The rules every run passes (jobs/admission.py), the quota included, but
            # the user's slots: the round paces itself (CALIBRATION_PARALLEL).
            run = start_exercise_run(
                account, exercise, target, course=None, calibration=calibration, slots=False
            )
        except Refused as refused:
            run = _not_run(account, exercise, target, calibration, str(refused))
        started_runs.append(run)
    return started_runs


def _not_run(
    account: ClusterAccount,
    exercise: Exercise,
    target: StorageTarget,
    calibration: Calibration,
    problem: str,
) -> BenchmarkRun:
    """A run the rules leave no room for (the quota), as the lab refuses it a trainee:
    saved failed, never sent to Slurm, and counted in the round's summary."""
    run = exercise_run(account, exercise, target, course=None, calibration=calibration)
    return refused_run(run, problem)


def advance(calibration_id: int) -> Calibration | None:
    """One step of a round: starts its next runs if slots are free, or keeps its
    figures once every run has ended. Idempotent, and safe to call from several
    places at once (the round's row is held)."""
    with transaction.atomic():
        calibration = (
            Calibration.objects.select_for_update(of=("self",))
            .select_related("profile", "started_by")
            .filter(pk=calibration_id)
            .first()
        )
        if calibration is None or calibration.finished_at is not None:
            return calibration
        runs = list(
            calibration.runs.select_related("result", "exercise", "target")
            .defer("raw_output", "job_script")  # read every 2 s while the round goes
            .order_by("pk")
        )
        pairs = planned_pairs(calibration)
        planned = {(e.pk, t.pk) for e, t in pairs}
        runs = [run for run in runs if (run.exercise_id, run.target_id) in planned]
        if len(runs) < len(pairs) * calibration.repeat:
            try:
                account = _account_of(calibration.started_by)
            except CalibrationRefused as refused:
                _end_without_figures(calibration, f"Stopped: {refused}")
                return calibration
            _start_next(calibration, account, runs, pairs)
        elif all(has_ended(run) for run in runs):
            _keep_figures(calibration, runs, pairs)
    return calibration


def has_ended(run: BenchmarkRun) -> bool:
    """Ended, and a completed run's output is in (or will not come)."""
    if run.status in (RunStatus.WAITING, *ACTIVE_STATUSES):
        return False
    if run.status == RunStatus.COMPLETED and not hasattr(run, "result"):
        return bool(run.parse_error) or run.result_missing
    return True


def metrics_of(run: BenchmarkRun) -> tuple[Metric, ...]:
    """What a run of its engine and workload measures."""
    if get_engine(run.engine).metadata:
        return RATE_METRICS
    return BANDWIDTH_METRICS if run.workload.get("read_back") else (Metric.WRITE,)


def figures_of(run: BenchmarkRun) -> dict[Metric, float]:
    """A run's figures that can be true: bandwidths in MiB/s, operations per second.
    Empty for a run that failed or gave none."""
    result = getattr(run, "result", None) if run.status == RunStatus.COMPLETED else None
    if result is None:
        return {}
    figures = {metric: result.figure(RESULT_FIELD[metric]) for metric in metrics_of(run)}
    return {metric: value for metric, value in figures.items() if value is not None}


def _why_none(run: BenchmarkRun) -> str:
    if run.status == RunStatus.FAILED and run.status_reason.startswith(NOT_RUN):
        return "not run (quota)"
    if run.status != RunStatus.COMPLETED:
        return run.get_status_display().lower()
    if run.parse_error:
        return "output not readable"
    if not hasattr(run, "result"):
        return "output never arrived"
    return "no figure"


def _keep_figures(calibration: Calibration, runs: list[BenchmarkRun], pairs: list[Pair]) -> None:
    """Every run has ended: the median, lowest and highest figure of each pair and
    metric become its measured reference, replacing an earlier round's."""
    values: dict[tuple[int, int, str], list[float]] = defaultdict(list)
    missing: dict[tuple[int, int], Counter] = defaultdict(Counter)
    # Beside a write figure: a sweep's at each request size, and the space the files took.
    sizes: dict[tuple[int, int], dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    spaces: dict[tuple[int, int], list[Space]] = defaultdict(list)
    for run in runs:
        figures = figures_of(run)
        for metric, value in figures.items():
            values[(run.exercise_id, run.target_id, metric)].append(value)
        if not figures:
            missing[(run.exercise_id, run.target_id)][_why_none(run)] += 1
        elif Metric.WRITE in figures:
            pair = (run.exercise_id, run.target_id)
            for size, mib_s in run.result.series_mib_s:
                if mib_s is not None:
                    sizes[pair][size].append(mib_s)
            if run.result.space is not None:
                spaces[pair].append(run.result.space)
    now = timezone.now()
    targets = {target.pk: target for _, target in pairs}
    implausible: dict[tuple[int, int], list[str]] = defaultdict(list)
    for (exercise_id, target_id, metric), figures in values.items():
        out = kept_out(figures, metric, targets[target_id])
        kept = [value for i, value in enumerate(figures) if i not in out]
        unit = "MiB/s" if metric in BANDWIDTH_METRICS else "ops/s"
        implausible[(exercise_id, target_id)] += [
            f"{Metric(metric).label} {shown(figures[i])} {unit} ({why})" for i, why in out.items()
        ]
        if not kept:
            continue  # as a pair with no figure: it keeps what it had
        beside = {}
        if metric == Metric.WRITE:
            beside = _beside_the_write_figure(
                sizes.get((exercise_id, target_id), {}), spaces.get((exercise_id, target_id), [])
            )
        MeasuredReference.objects.update_or_create(
            exercise_id=exercise_id,
            target_id=target_id,
            metric=metric,
            defaults={
                "calibration": calibration,
                "values": kept,
                "kept_out": [figures[i] for i in out],
                "median": statistics.median(kept),
                "low": min(kept),
                "high": max(kept),
                "measured_at": now,
                **beside,
            },
        )
    failed = sum(sum(why.values()) for why in missing.values())
    lines = [
        calibration.summary.splitlines()[0],
        f"Ended {timezone.localtime(now):%Y-%m-%d %H:%M}: {len(runs) - failed} of {len(runs)} "
        f"runs gave figures, {failed} failed or gave none.",
    ]
    earlier = _earlier_dates(calibration, [pair for pair in missing])
    for exercise, target in pairs:
        if out := implausible.get((exercise.pk, target.pk)):
            lines.append(
                f"{exercise.key} on {target.name}: kept out as implausible: {'; '.join(out)}."
            )
        why = missing.get((exercise.pk, target.pk))
        if not why:
            continue
        reasons = ", ".join(f"{n} {reason}" for reason, n in why.items())
        pair = f"{exercise.key} on {target.name}"
        if sum(why.values()) < calibration.repeat:
            lines.append(
                f"{pair}: {sum(why.values())} of {calibration.repeat} runs gave no "
                f"figure ({reasons}); left out of its figures."
            )
        elif (exercise.pk, target.pk) in earlier:
            lines.append(
                f"{pair}: no run gave a figure ({reasons}); it keeps its earlier "
                f"measured reference of {earlier[(exercise.pk, target.pk)]}."
            )
        else:
            lines.append(
                f"{pair}: no run gave a figure ({reasons}); it has no measured reference yet."
            )
    calibration.finished_at = now
    calibration.summary = "\n".join(lines)
    calibration.save(update_fields=["finished_at", "summary"])
    _start_what_follows(calibration)


def _start_what_follows(calibration: Calibration) -> None:
    """The round that follows a finished one, if it names one (then_exercise_keys): the
    same starter, targets and repeat. A refusal is said in the finished round's summary."""
    if not calibration.then_exercise_keys:
        return
    if calibration.started_by is None:
        calibration.summary += (
            "\nThe round that was to follow did not start: the login that started this one "
            "is gone. Start it from the calibration page."
        )
        calibration.save(update_fields=["summary"])
        return
    try:
        after = start_round(
            calibration.started_by,
            calibration.profile,
            repeat=calibration.then_repeat or calibration.repeat,
            exercise_keys=calibration.then_exercise_keys,
            target_keys=calibration.target_keys,
        )
    except CalibrationRefused as refused:
        said = f"The round that was to follow did not start: {refused}"
    else:
        said = f"Round {after.pk} follows it: exercises {', '.join(after.exercise_keys)}."
    calibration.summary += f"\n{said}"
    calibration.save(update_fields=["summary"])


def _beside_the_write_figure(sizes: dict[int, list[float]], spaces: list[Space]) -> dict:
    """A sweep's median at each request size (MeasuredReference.by_size), and the
    medians of what the runs' files held and took (MeasuredReference.space)."""
    by_size = {str(size): statistics.median(found) for size, found in sorted(sizes.items())}
    space = {}
    if spaces:
        space = {
            "held": int(statistics.median(s.held for s in spaces)),
            "stored": int(statistics.median(s.stored for s in spaces)),
        }
    return {"by_size": by_size, "space": space}


def _earlier_dates(calibration: Calibration, pairs: list[tuple[int, int]]) -> dict:
    """(exercise id, target id) -> the date of the measured reference it keeps."""
    rows = MeasuredReference.objects.filter(
        exercise__profile=calibration.profile, exercise_id__in=[e for e, _ in pairs]
    ).exclude(calibration=calibration)
    wanted = set(pairs)
    return {
        (row.exercise_id, row.target_id): f"{timezone.localtime(row.measured_at):%Y-%m-%d}"
        for row in rows
        if (row.exercise_id, row.target_id) in wanted
    }


def _end_without_figures(calibration: Calibration, why: str) -> None:
    calibration.finished_at = timezone.now()
    calibration.summary = f"{calibration.summary.splitlines()[0]}\n{why}"
    calibration.save(update_fields=["finished_at", "summary"])


def cancel_round(calibration_id: int, user: AbstractBaseUser) -> int:
    """Ends a round without keeping its figures, and cancels its runs still going.
    Returns how many of them Slurm could not cancel now (they end by their time
    limit)."""
    with transaction.atomic():
        calibration = Calibration.objects.select_for_update().filter(pk=calibration_id).first()
        if calibration is None or calibration.finished_at is not None:
            raise CalibrationRefused("That calibration round has ended already.")
        if not may_cancel(user, calibration):
            starter = calibration.started_by.get_username() if calibration.started_by else "?"
            raise CalibrationRefused(
                f"Only {starter}, who started round {calibration.pk}, or staff may cancel it."
            )
        when = f"{timezone.localtime():%Y-%m-%d %H:%M}"
        why = f"Cancelled by {user.get_username()} at {when}; no figure of it was kept."
        _end_without_figures(calibration, why)
    return cancel_all(calibration.runs.all())


def advance_all() -> int:
    """One step of every round going (beat). Returns how many there were."""
    ids = list(Calibration.objects.filter(finished_at__isnull=True).values_list("pk", flat=True))
    for calibration_id in ids:
        advance(calibration_id)
    return len(ids)


@dataclass
class Progress:
    """Where a round stands, for its page and the command."""

    calibration: Calibration
    total: int  # runs planned
    started: int
    going: int
    gave_figures: int

    @property
    def ended(self) -> int:
        return self.started - self.going

    @property
    def version(self) -> str:
        finished = self.calibration.finished_at is not None
        return f"{self.calibration.pk}-{self.started}-{self.going}-{self.gave_figures}-{finished}"


def progress(calibration: Calibration) -> Progress:
    """Counts of the round's runs (1 query)."""
    exercise_keys, target_keys = calibration.exercise_keys, calibration.target_keys
    counts = calibration.runs.aggregate(
        started=Count("id"),
        going=Count("id", filter=Q(status__in=ACTIVE_STATUSES)),
        figures=Count("id", filter=Q(status=RunStatus.COMPLETED, result__isnull=False)),
    )
    total = len(exercise_keys) * len(target_keys) * calibration.repeat
    return Progress(calibration, total, counts["started"], counts["going"], counts["figures"])


def measured_table(profile: SiteProfile) -> list[MeasuredReference]:
    """The profile's measured references in the lab's order (1 query)."""
    return list(
        MeasuredReference.objects.filter(exercise__profile=profile)
        .select_related("exercise", "target")
        .order_by("exercise__order", "exercise__key", "target__order", "target__key", "metric")
    )
