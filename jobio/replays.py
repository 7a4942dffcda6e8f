"""Replay my job: a checked job's I/O, turned into a bounded benchmark (replay.py), run
on the targets its owner ticks, as their cluster account, through the lab's pipeline
(slots, waiting runs, cancel, results, faults); and what the runs say in the job's
terms (replay_figures.py).

`start_replay` saves one run per target, or none at all, and raises ReplayRefused with
what to tell the user. The rules, in this order, checked in one transaction holding the
user's cluster account row (two clicks at once cannot both start):

1. the check is read, and its I/O replayable (NotReplayable's one line otherwise);
2. every target is one of the site's, and there is one at least;
3. the user has a cluster account (the replay runs as it);
4. one replay going per user: while one has runs unfinished, another starts nothing.
   The same check's replay started within START_AGAIN_SECONDS is taken for a double
   click and given back (the page shows it) instead of refused;
5. at most REPLAYS_PER_DAY started in the last 24 hours;
6. then the rules every run of the portal passes (jobs/admission.py: admit): no run
   makes more than REPLAY_MAX_FILES files at once; the replay's files fit in what is
   left of the user's quota on each target (a 4 KiB block a file); the runs fit in the
   user's free slots or wait for them, as a lab start's do, and go to Slurm one after
   another (RUNS_IN_TURN): the targets of one replay do not measure each other.

A replay of many files on a target where the user's file quota is unknown is not
refused: it is held to REPLAY_MAX_FILES at once like every replay, its page says so,
and its job makes no file unless the filesystem has an inode free for each
(jobs/room.py, templates/jobs/job_script.sh).

Each target's run is sized for that target (jobio/sizing.py): it goes for the replay's
seconds however fast the target is, and says how it was sized (Replay.sized).
"""

import math
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from exercises.advisor.job_io import JobIO
from exercises.catalogue.models import StorageTarget
from exercises.catalogue.profiles import active
from exercises.quotas.checks import files_known
from jobio.models import JobCheck, Replay
from jobio.replay import NotReplayable, replay_of
from jobio.sizing import Sized, sized_runs
from jobs.admission import Refused, admit
from jobs.engines import Workload
from jobs.models import UNFINISHED_STATUSES, BenchmarkRun
from jobs.submission import new_run
from portal.models import ClusterAccount
from portal.units import MiB

DAY = timedelta(days=1)
# The slowest a target may go through a replay's bytes once (a disk under load) and
# still end within its time limit: IOR goes through them once at least, and fio lays
# out what it reads before its clock starts.
SLOWEST_BYTES_PER_S = 5 * MiB


class ReplayRefused(Exception):
    """No replay was started; the message says why and what to do."""


def start_replay(
    user: AbstractBaseUser, check: JobCheck, targets: list[StorageTarget]
) -> tuple[Replay, bool]:
    """The replay of `check` on `targets` (one run each, queued or waiting), and True;
    or the same check's replay started a moment ago, and False (a double click); or
    ReplayRefused."""
    if check.io is None:
        raise ReplayRefused("The log is still being read: replay it once its I/O is shown.")
    io = JobIO.from_json(check.io)
    try:
        planned = replay_of(
            io,
            max_bytes=settings.REPLAY_MAX_BYTES,
            max_processes=settings.REPLAY_MAX_PROCESSES,
            seconds=settings.REPLAY_SECONDS,
            max_files=settings.REPLAY_MAX_FILES,
        )
    except NotReplayable as e:
        raise ReplayRefused(str(e)) from None
    if not targets:
        raise ReplayRefused("Choose at least one storage target to replay the job on.")
    site = active()
    foreign = [t.name for t in targets if site is None or t.profile_id != site.pk]
    if foreign:
        raise ReplayRefused(f"{', '.join(foreign)} is not a storage target of this site.")
    workload = planned.workload
    sized = sized_runs(planned, io, site, targets)
    with transaction.atomic():
        account = ClusterAccount.objects.select_for_update().filter(user=user).first()
        if account is None:
            raise ReplayRefused(
                "Your portal login has no cluster account, so no job can run for you. "
                "Ask the HPC support team to link one."
            )
        going = _going(user)
        if going is not None:
            if going.check_of_id == check.pk and _moments_ago(going):
                return going, False
            raise ReplayRefused(
                "A replay of yours is still running: one goes at a time. Wait for its "
                "figures, or cancel its runs, then start this one."
            )
        today = Replay.objects.filter(user=user, created_at__gte=timezone.now() - DAY).count()
        if today >= settings.REPLAYS_PER_DAY:
            raise ReplayRefused(
                f"You started {today} replays in the last 24 hours, the most this site "
                "allows in a day: start this one tomorrow, or ask the HPC support team."
            )
        said = _what_bounds_the_files(account, targets, sized)
        replay = Replay.objects.create(
            user=user,
            check_of=check,
            engine=planned.engine,
            workload=workload.model_dump(mode="json"),
            job_bytes=planned.job_bytes,
            replay_bytes=planned.replay_bytes,
            kept=list(planned.kept),
            not_kept=list(planned.not_kept),
            sized={key: text for key, text in said.items() if text},
        )
        # Each target's own run: mdtest's may make more files at once on a fast one.
        runs = [_run(account, replay, sized[t.key].workload, t) for t in targets]
        try:
            admit(account, runs, max_files=settings.REPLAY_MAX_FILES, account_held=True)
        except Refused as refused:  # the replay's row goes with the transaction
            raise ReplayRefused(str(refused)) from None
    return replay, True


def _what_bounds_the_files(
    account: ClusterAccount, targets: list[StorageTarget], sized: dict[str, Sized]
) -> dict[str, str]:
    """Target key -> how its run was sized, and, for a run of many files on a target
    where the user's file quota is unknown (the quota check cannot count them), that
    the bound of files at once holds them: the replay is scaled to it, not refused
    (1 query)."""
    known = files_known(account, targets)
    said = {t.key: sized[t.key].said for t in targets}
    for target in targets:
        if sized[target.key].workload.files_per_process > 1 and target.pk not in known:
            bound = (
                f"your file quota on {target.name} is not known here, so the replay makes "
                f"at most {settings.REPLAY_MAX_FILES:,} files there at once (the site's "
                "bound), and its job makes none unless the filesystem has an inode free "
                "for each"
            )
            said[target.key] = "; ".join(text for text in (said[target.key], bound) if text)
    return said


def _run(
    account: ClusterAccount, replay: Replay, workload: Workload, target: StorageTarget
) -> BenchmarkRun:
    return new_run(
        account,
        target,
        workload,
        engine=replay.engine,
        time_limit_minutes=time_limit_minutes(workload),
        replay=replay,
        waiting=True,
    )


def time_limit_minutes(workload: Workload) -> int:
    """Slurm's limit for one replay run: thrice its timed phases (mdtest's four file
    phases each as long as making the files, every round) and one pass over its bytes
    at SLOWEST_BYTES_PER_S, and a minute for the start and the end of a job; a replay
    once through its bytes (made before replays were timed) gets ten minutes."""
    if not workload.seconds:
        return 10
    phases = 2 if workload.read_back else 1
    if workload.files_per_process > 1 and not (workload.read_only or workload.read_back):
        phases = 4 * workload.iterations  # mdtest: make, stat, read, remove, each round
    once = workload.size_per_process * workload.processes / SLOWEST_BYTES_PER_S
    return max(2, math.ceil((phases * workload.seconds + once) * 3 / 60) + 1)


def _going(user: AbstractBaseUser) -> Replay | None:
    """The user's replay with a run still unfinished, if any."""
    return (
        Replay.objects.filter(user=user, runs__status__in=UNFINISHED_STATUSES)
        .order_by("-created_at")
        .first()
    )


def _moments_ago(replay: Replay) -> bool:
    return timezone.now() - replay.created_at < timedelta(seconds=settings.START_AGAIN_SECONDS)


def visible_replay(user: AbstractBaseUser, replay_id: object) -> Replay | None:
    """The replay if `user` owns it or is staff; None otherwise (its page says the same
    whether it exists or not)."""
    replay = Replay.objects.filter(pk=replay_id).select_related("check_of").first()
    if replay is not None and (replay.user_id == user.pk or user.is_staff):
        return replay
    return None
