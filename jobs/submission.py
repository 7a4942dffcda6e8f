"""Submission: a run is saved queued (or waiting for a slot), then handed to Slurm
exactly once.

`start_run` saves the run and enqueues it once the row is committed; a run saved
waiting is enqueued by `queue_waiting` once a slot frees up (jobs/slots.py). The runs
a click or a promotion queued go in one message, `submit_runs`: in the worker, not
in the request that started them (in a class's ramp each round trip a start makes
waits for a core), it takes each run's place in the rate limit (jobs/ratelimit.py)
and sends the run's `submit_run`, due when its place is. That task takes a lease on
the run (SUBMIT_LEASE_SECONDS): a retried or duplicated task either finds the run
held, or adopts the job an earlier attempt created instead of submitting a second
one. The sync cycle gives a new task to queued runs whose task was lost, or never
left (the broker was down when the run was started). A queued run that waits on an
outage says so in its status_reason, and the trainee sees it.
`cancel` takes a run back, waiting, before or after it reached Slurm; a cancel that
comes while the submission is in flight is honoured by `submit` itself.
"""

import logging
import math
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from functools import partial
from typing import Protocol

from celery import shared_task
from celery.app.task import Task
from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models import Model, QuerySet
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerUnavailable
from pydantic import ValidationError

from jobs import slots
from jobs.engines import Workload, get_engine
from jobs.engines.base import validation_reason
from jobs.models import ACTIVE_STATUSES, IN_SLURM_STATUSES, BenchmarkRun, RunStatus
from jobs.ratelimit import RateLimited, take_submit_slot
from jobs.results import token_hash
from jobs.scripts import job_spec, render_script
from jobs.slurm import JobSpec, SlurmClient, SlurmError, SlurmJob, SlurmRejected, get_client
from jobs.states import transition
from portal import locks
from portal.models import ClusterAccount

log = logging.getLogger(__name__)

# What a queued run held up by an outage tells the trainee (cleared once submitted).
BROKER_DOWN_REASON = (
    "The portal's task queue did not answer when this run was started. The run waits "
    "here and goes to the cluster by itself once the queue is back."
)


class RunTarget(Protocol):
    """What a run needs of its storage target (a catalogue.StorageTarget): the jobs
    know targets by this, and by the foreign key, never by the catalogue's code."""

    in_memory: bool

    def directory_for(self, cluster_username: str, spread: bool = False) -> str: ...


def start_run(
    account: ClusterAccount, target: RunTarget, workload: Workload, **run: object
) -> BenchmarkRun:
    """Saves a queued run (new_run); its submission is enqueued once the row is
    committed. A `waiting` one waits for `queue_waiting` instead."""
    saved = new_run(account, target, workload, **run)
    saved.save()
    if saved.status == RunStatus.QUEUED:
        enqueue_once_committed([saved])
    return saved


def new_run(
    account: ClusterAccount,
    target: RunTarget,
    workload: Workload,
    *,
    engine: str = "fio",
    time_limit_minutes: int = 10,
    exercise: Model | None = None,
    course: Model | None = None,
    waiting: bool = False,
    calibration: Model | None = None,
    replay: Model | None = None,
    spread: bool = False,
) -> BenchmarkRun:
    """A run of `workload` on `target` as `account`, not yet saved: queued, or
    `waiting` for a slot. No rule is checked here: the lab's rules (caps, quota,
    course) are in exercises/lab/start.py, which every page that starts runs goes
    through. Saved waiting (several at once: bulk_create), it needs nothing more;
    saved queued, it needs its submission enqueued (start_run does both)."""
    get_engine(engine)  # an unknown engine fails here, before anything is saved
    return BenchmarkRun(
        user_id=account.user_id,
        cluster_username=account.username,
        target=target,
        exercise=exercise,
        course=course,
        calibration=calibration,
        replay=replay,
        # `spread`: where the target spreads each file over all its servers, if it can.
        target_directory=target.directory_for(account.username, spread=spread),
        in_memory=target.in_memory,
        engine=engine,
        workload=workload.model_dump(mode="json"),
        time_limit_minutes=time_limit_minutes,
        status=RunStatus.WAITING if waiting else RunStatus.QUEUED,
        # Replaced by the hash of the secret that goes with the job at submission.
        result_token_hash=token_hash(secrets.token_urlsafe(32)),
    )


def queue_waiting(user_id: int) -> list[BenchmarkRun]:
    """Queues the user's waiting runs that fit in their free slots (jobs/slots.py),
    and enqueues their submission once that is committed. Returns them."""
    promoted = slots.promote(user_id)
    enqueue_once_committed(promoted)
    return promoted


def enqueue_once_committed(runs: list[BenchmarkRun]) -> None:
    """Sends the submission of `runs`, queued in the current transaction, once it
    commits (at once outside of one): one message for them all (submit_runs)."""
    if runs:
        transaction.on_commit(partial(_enqueue, runs))


def queue_waiting_everywhere() -> int:
    """The sync cycle's pass: every user's waiting runs that fit. Returns how many."""
    queued = 0
    for user_id in slots.users_who_may_move():
        try:
            queued += len(queue_waiting(user_id))
        except Exception:  # one user's trouble must not stop the sync cycle
            log.exception("user %s: waiting runs could not be queued", user_id)
    return queued


def _enqueue(runs: list[BenchmarkRun]) -> None:
    """Sends the runs' submit_runs task. With the broker (Redis) down the runs are
    kept, not failed: they stay queued and say why (also on `runs`, for the page that
    started them), and the sync gives them a task once the broker is back
    (resubmit_stale)."""
    try:
        submit_runs.delay([run.pk for run in runs])
    except BrokerUnavailable as e:
        ids = [run.pk for run in runs]
        log.warning("runs %s: their submit task could not be sent (%s); they wait", ids, e)
        for run in runs:
            run.status_reason = BROKER_DOWN_REASON
        _note_waiting(ids, BROKER_DOWN_REASON)


def _note_waiting(run_ids: list[int], reason: str) -> None:
    BenchmarkRun.objects.filter(pk__in=run_ids, status=RunStatus.QUEUED).update(
        status_reason=reason, updated_at=timezone.now()
    )


def _scheduled_key(run_id: int) -> str:
    return f"jobs:submit-scheduled:{run_id}"


def _mark_scheduled(run_id: int, delay: float) -> None:
    """The run's submit task comes back in `delay` seconds: the sync must not enqueue
    another one meanwhile (resubmit_stale)."""
    timeout = math.ceil(delay) + settings.SUBMIT_LEASE_SECONDS + 1
    cache.set(_scheduled_key(run_id), 1, timeout=timeout)


def _claim(run_id: int) -> tuple[BenchmarkRun, bool] | None:
    """Marks a submit attempt. None if the run is not queued, or another attempt
    holds it; else the run and whether an earlier attempt may have reached Slurm."""
    lease = timezone.now() - timedelta(seconds=settings.SUBMIT_LEASE_SECONDS)
    with transaction.atomic():
        run = BenchmarkRun.objects.select_for_update().filter(pk=run_id).first()
        if run is None or run.status != RunStatus.QUEUED:
            return None
        if run.submit_attempted_at and run.submit_attempted_at > lease:
            return None
        earlier_attempt = run.submit_attempted_at is not None
        run.submit_attempted_at = timezone.now()
        run.submit_attempts += 1
        run.save(update_fields=["submit_attempted_at", "submit_attempts"])
    return run, earlier_attempt


def _find_job(run: BenchmarkRun) -> SlurmJob | None:
    """The job an earlier attempt created: its name and its user. (Job names are
    public; another user could name a job of theirs after this run.)"""
    jobs = get_client().jobs(run.cluster_username) or []
    mine = (job for job in jobs if job.user_name == run.cluster_username)
    return next((job for job in mine if job.name == run.job_name), None)


def submit(run_id: int, *, slot_taken: bool = False) -> None:
    """Hands a queued run to Slurm, exactly once. Transient Slurm errors propagate
    (the task retries); permanent ones fail the run with Slurm's reason."""
    if not slot_taken:
        try:
            take_submit_slot()
        except RateLimited as e:
            _mark_scheduled(run_id, e.delay)
            raise
    claimed = _claim(run_id)
    if claimed is None:
        return
    run, earlier_attempt = claimed
    client = get_client()

    job = _find_job(run) if earlier_attempt else None
    if job is not None:
        _mark_submitted(run, job.job_id)
        return
    token = secrets.token_urlsafe(32)
    try:
        script = render_script(run)
        spec = job_spec(run, script, token)
    except ValueError as e:  # a value Slurm or the engine cannot take: no retry helps
        why = validation_reason(e) if isinstance(e, ValidationError) else str(e)
        reason = f"The portal could not write this job ({why})."
        transition(run.pk, RunStatus.FAILED, status_reason=reason)
        return
    BenchmarkRun.objects.filter(pk=run.pk).update(
        result_token_hash=token_hash(token), job_script=script
    )
    with _in_turn(run) as after:
        try:
            job_id = _submit_after(client, run, spec, after)
        except SlurmError as e:
            if not e.permanent:
                raise
            transition(run.pk, RunStatus.FAILED, status_reason=f"Slurm refused the job: {e}")
            return
        _mark_submitted(run, job_id)


@contextmanager
def _in_turn(run: BenchmarkRun) -> Iterator[int | None]:
    """The account's turn to hand Slurm a run: yields the job of the account's latest
    run in Slurm, which this one is to start after (None: none, or the site lets runs
    overlap), and holds every other submission of the account's until this one is
    marked submitted. Runs of one account measured at once share the node's cores,
    memory and link, and each shows a fraction of what it would alone: the four
    targets of one click, 2,232 MiB/s on $TMPDIR against 4,117 measured alone. So they
    go one at a time, in the order they reached Slurm, each started by Slurm as the
    one before it ends (afterany: however it ends), without a round trip through the
    portal's sync."""
    if not settings.RUNS_IN_TURN:
        yield None
        return
    with transaction.atomic():
        # One lock per account, for this transaction: two workers submitting runs of
        # one account would each find the same latest run, and start together after it.
        locks.hold(_TURN + run.cluster_username)
        latest = (
            BenchmarkRun.objects.filter(
                cluster_username=run.cluster_username,
                status__in=IN_SLURM_STATUSES,
                slurm_job_id__isnull=False,
            )
            .exclude(pk=run.pk)
            .order_by("-submitted_at", "-pk")
            .values_list("slurm_job_id", flat=True)
            .first()
        )
        yield latest


_TURN = "storagelab:turn:"  # the advisory lock's name space, before the account's name


def _submit_after(client: SlurmClient, run: BenchmarkRun, spec: JobSpec, after: int | None) -> int:
    """Submits the run's job, after job `after` if there is one. A job Slurm has
    already forgotten (its record goes MinJobAge after it ended, and the portal's sync
    may not have heard yet) is no job to wait for: Slurm 22.05 takes the dependency as
    met; a release that refuses it gets the run again without it, to go at once."""
    if after is None:
        return client.submit(run.cluster_username, spec)
    try:
        return client.submit(run.cluster_username, spec.model_copy(update={"after": after}))
    except SlurmRejected as e:
        log.info("run %s: Slurm refused to start it after job %s (%s)", run.pk, after, e)
        return client.submit(run.cluster_username, spec)


def _mark_submitted(run: BenchmarkRun, job_id: int) -> None:
    now = timezone.now()
    submitted = transition(
        run.pk, RunStatus.SUBMITTED, slurm_job_id=job_id, submitted_at=now, status_reason=""
    )
    if not submitted:
        # Cancelled while the submission was in flight: take the job back.
        log.info("run %s was cancelled during submission; cancelling job %s", run.pk, job_id)
        get_client().cancel(run.cluster_username, job_id)


def resubmit_stale() -> None:
    """Queued runs whose submit task gave up (a long outage) or vanished get a new one."""
    lease = timezone.now() - timedelta(seconds=settings.SUBMIT_LEASE_SECONDS)
    stale = BenchmarkRun.objects.filter(status=RunStatus.QUEUED, created_at__lt=lease).exclude(
        submit_attempted_at__gt=lease
    )
    run_ids = list(stale.values_list("pk", flat=True)[:100])
    scheduled = cache.get_many([_scheduled_key(run_id) for run_id in run_ids])
    unscheduled = [run_id for run_id in run_ids if _scheduled_key(run_id) not in scheduled]
    if unscheduled:
        submit_runs.delay(unscheduled)


@shared_task(name="jobs.tasks.submit_runs")
def submit_runs(run_ids: list[int]) -> None:
    """The one message a click (or a promotion, or the sync) sends for its runs: each
    run's place in the rate limit, and its submit task, due then. Taken here, in the
    worker, and not in the request that queued the runs: in a class's ramp each round
    trip of a start waits for a core. Each run's task then runs once, when its place
    is due, rather than once more only to learn when that is."""
    for run_id in run_ids:
        try:
            take_submit_slot()
        except RateLimited as e:
            _mark_scheduled(run_id, e.delay)
            # Without a place in sight (not reserved), the task looks for one then.
            submit_run.apply_async((run_id,), {"slot_taken": e.reserved}, countdown=e.delay)
        else:
            submit_run.delay(run_id, slot_taken=True)


# No retry limit: a run waits as long as Slurm is away (it says "queued", and can be
# cancelled); the sync cycle enqueues again any run whose task was lost. The name is
# the one queued messages carry (the task lived in jobs/tasks.py).
@shared_task(name="jobs.tasks.submit_run", bind=True, max_retries=None, throws=(SlurmError,))
def submit_run(self: Task, run_id: int, slot_taken: bool = False) -> None:
    try:
        submit(run_id, slot_taken=slot_taken)
    except RateLimited as e:
        # Come back when the reserved place in the rate limit is due (or, with no
        # place in sight, look for one again then).
        kwargs = {"slot_taken": e.reserved}
        raise self.retry(countdown=e.delay, args=(run_id,), kwargs=kwargs)
    except SlurmError as e:
        if e.permanent:
            raise
        # Whether the job reached Slurm is unknown (an answer may come too late): the
        # run's lease keeps other attempts off until this one's request is over, and
        # the attempt after it looks for the job before submitting (submit, _find_job).
        why = str(e).partition(": ")[2] or str(e)  # without the request's method and URL
        reason = f"Slurm did not take the run yet ({why}). It waits here; the portal tries "
        _note_waiting([run_id], reason + "again by itself.")
        # slurmrestd or slurmctld away: back off, up to 30 s between tries. The next
        # try takes a place in the rate limit again: when slurmrestd comes back, the
        # runs it held must not all rush in at once.
        countdown = min(2 ** min(self.request.retries, 5), 30)
        raise self.retry(exc=e, countdown=countdown, args=(run_id,), kwargs={"slot_taken": False})


def cancel_all(runs: QuerySet[BenchmarkRun]) -> int:
    """Cancels every unfinished run of `runs`: the waiting ones first, so that the
    slots the others free start none of them. Returns how many Slurm could not cancel
    now (they end by their time limit; the caller says "try again")."""
    failed = 0
    for statuses in ((RunStatus.WAITING,), ACTIVE_STATUSES):
        for run in runs.filter(status__in=statuses):
            try:
                cancel(run)
            except SlurmError:
                failed += 1
    return failed


def cancel(run: BenchmarkRun) -> bool:
    """Cancels a run: waiting or before submission at once (a queued run's slot goes
    to the user's next waiting run), else through Slurm (the sync fills the slot when
    Slurm says the job ended). Transient Slurm errors propagate so the caller can say
    "try again"."""
    before_slurm = (RunStatus.WAITING, RunStatus.QUEUED)
    if run.status in before_slurm:
        reason = "Cancelled before it started."
        if transition(run.pk, RunStatus.CANCELLED, only_from=before_slurm, status_reason=reason):
            queue_waiting(run.user_id)
            return True
        # Queued meanwhile (a slot freed up), or its submission committed: look again.
        run.refresh_from_db()
        if run.status == RunStatus.QUEUED:
            return cancel(run)
    if run.status in IN_SLURM_STATUSES and run.slurm_job_id:
        get_client().cancel(run.cluster_username, run.slurm_job_id)
        return True
    return False
