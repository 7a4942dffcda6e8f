"""Handover: a queued run handed to Slurm exactly once, from a Celery task.

Admission (jobs/admission.py) saves runs queued and sends their one message,
`submit_runs`: in the worker, not in the request that started them (in a class's ramp
each round trip a start makes waits for a core), it takes each run's place in the rate
limit (jobs/ratelimit.py) and sends the run's `submit_run`, due when its place is. That
task takes a lease on the run (SUBMIT_LEASE_SECONDS): a retried or duplicated task
either finds the run held, or adopts the job an earlier attempt created instead of
submitting a second one. The sync cycle gives a new task to queued runs whose task was
lost, or never left (the broker was down when the run was started). A queued run that
waits on an outage says so in its status_reason, and the trainee sees it. A cancel that
comes while the submission is in flight is honoured by `submit` itself.

Together with jobs/app_jobs.py (scans, purges), this module holds the portal's only
calls of the Slurm client's `submit` (tests/test_one_road.py).
"""

import logging
import math
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

from celery import shared_task
from celery.app.task import Task
from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone
from pydantic import ValidationError

from jobs.engines.base import validation_reason
from jobs.models import IN_SLURM_STATUSES, BenchmarkRun, RunStatus
from jobs.ratelimit import RateLimited, take_submit_slot
from jobs.results import token_hash
from jobs.scripts import job_spec, render_script
from jobs.slurm import JobSpec, SlurmClient, SlurmError, SlurmJob, SlurmRejected, get_client
from jobs.states import transition
from portal import locks

log = logging.getLogger(__name__)


def note_waiting(run_ids: list[int], reason: str) -> None:
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
        note_waiting([run_id], reason + "again by itself.")
        # slurmrestd or slurmctld away: back off, up to 30 s between tries. The next
        # try takes a place in the rate limit again: when slurmrestd comes back, the
        # runs it held must not all rush in at once.
        countdown = min(2 ** min(self.request.retries, 5), 30)
        raise self.retry(exc=e, countdown=countdown, args=(run_id,), kwargs={"slot_taken": False})
