"""The run lifecycle: start, submit, follow, receive the result, cancel.

Tasks in jobs/tasks.py are thin wrappers around these functions.
"""

import hashlib
import hmac
import logging
import math
import secrets
import time
from datetime import datetime, timedelta

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from exercises.models import Course, Exercise, StorageTarget
from jobs.engines import ResultParseError, Workload, get_engine
from jobs.models import IN_SLURM_STATUSES, BenchmarkRun, RunResult, RunStatus
from jobs.scripts import job_spec, render_script
from jobs.slurm import SlurmError, SlurmJob, get_client
from jobs.states import FROM_SLURM, transition
from portal.models import ClusterAccount

log = logging.getLogger(__name__)

SYNC_SINCE_KEY = "jobs:sync:since"
# How far ahead a submission may be placed by the rate limit (10 min of a class's burst).
MAX_SLOT_AHEAD_SECONDS = 600
# The first second that may still have a place (every earlier one is full).
SUBMIT_FRONTIER_KEY = "jobs:submits:frontier"
SYNC_LOCK_KEY = "jobs:sync:lock"


class RateLimited(Exception):
    """Too many submissions now: a slot `delay` seconds ahead is reserved for this one."""

    def __init__(self, delay: float):
        self.delay = delay
        super().__init__(f"submission slot reserved in {delay:.1f} s")


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


# --- start ------------------------------------------------------------------------


def start_run(
    account: ClusterAccount,
    target: StorageTarget,
    workload: Workload,
    *,
    engine: str = "fio",
    time_limit_minutes: int = 10,
    exercise: Exercise | None = None,
    course: Course | None = None,
) -> BenchmarkRun:
    """Saves a queued run; its submission is enqueued once the row is committed."""
    from jobs.tasks import submit_run

    get_engine(engine)  # an unknown engine fails here, before anything is saved
    run = BenchmarkRun.objects.create(
        user=account.user,
        cluster_username=account.username,
        target=target,
        exercise=exercise,
        course=course,
        target_directory=target.directory_for(account.username),
        in_memory=target.in_memory,
        engine=engine,
        workload=workload.model_dump(mode="json"),
        time_limit_minutes=time_limit_minutes,
        # Replaced by the hash of the secret that goes with the job at submission.
        result_token_hash=token_hash(secrets.token_urlsafe(32)),
    )
    transaction.on_commit(lambda: submit_run.delay(run.pk))
    return run


# --- submit -----------------------------------------------------------------------


def _take_submit_slot() -> None:
    """A global rate limit (Redis): a class clicking at once cannot flood slurmrestd.

    Each submission takes a place in the first second, from now on, that has one
    left; a later one raises RateLimited with the delay to its place. The task waits
    that long once and then goes ahead (`submit(..., slot_taken=True)`), so a burst
    of 800 clicks costs 800 retries, not a retry storm. The search starts at the
    first second not known to be full, so the 800th click does not probe 80."""
    now = time.time()
    first = max(int(now), cache.get(SUBMIT_FRONTIER_KEY, 0))
    for second in range(first, int(now) + MAX_SLOT_AHEAD_SECONDS):
        key = f"jobs:submits:{second}"
        expires = second - int(now) + 10
        cache.add(key, 0, timeout=expires)
        taken = cache.incr(key)
        if taken <= settings.SLURM_SUBMIT_RATE:
            if taken == settings.SLURM_SUBMIT_RATE:
                # A racing worker may set an older frontier: it only searches longer.
                cache.set(SUBMIT_FRONTIER_KEY, second + 1, timeout=expires)
            if second > int(now):
                raise RateLimited(second - now)
            return
    raise RateLimited(60.0)  # no place in sight: look again in a minute


def _scheduled_key(run_id: int) -> str:
    return f"jobs:submit-scheduled:{run_id}"


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
    jobs = get_client().jobs(run.cluster_username) or []
    return next((job for job in jobs if job.name == run.job_name), None)


def submit(run_id: int, *, slot_taken: bool = False) -> None:
    """Hands a queued run to Slurm, exactly once. Transient Slurm errors propagate
    (the task retries); permanent ones fail the run with Slurm's reason."""
    if not slot_taken:
        try:
            _take_submit_slot()
        except RateLimited as e:
            # Its task comes back when its place is due: the sync must not enqueue
            # another one meanwhile.
            timeout = math.ceil(e.delay) + settings.SUBMIT_LEASE_SECONDS + 1
            cache.set(_scheduled_key(run_id), 1, timeout=timeout)
            raise
    claimed = _claim(run_id)
    if claimed is None:
        return
    run, earlier_attempt = claimed
    client = get_client()

    job = _find_job(run) if earlier_attempt else None
    if job is None:
        token = secrets.token_urlsafe(32)
        script = render_script(run)
        BenchmarkRun.objects.filter(pk=run.pk).update(
            result_token_hash=token_hash(token), job_script=script
        )
        try:
            job_id = client.submit(run.cluster_username, job_spec(run, script, token))
        except SlurmError as e:
            if not e.permanent:
                raise
            transition(run.pk, RunStatus.FAILED, status_reason=f"Slurm refused the job: {e}")
            return
    else:
        job_id = job.job_id

    now = timezone.now()
    if not transition(run.pk, RunStatus.SUBMITTED, slurm_job_id=job_id, submitted_at=now):
        # Cancelled while the submission was in flight: take the job back.
        log.info("run %s was cancelled during submission; cancelling job %s", run.pk, job_id)
        client.cancel(run.cluster_username, job_id)


# --- follow -------------------------------------------------------------------------


def apply_job(run: BenchmarkRun, job: SlurmJob) -> None:
    """Records what Slurm says of the run's job, moving its status if it changed."""
    fields = {
        "slurm_state": job.state.value,
        "slurm_reason": job.reason[:128],
        "exit_code": job.return_code,
        "exit_signal": job.signal,
        "started_at": job.start_time,
        "ended_at": job.end_time,
        "output_path": job.standard_output.replace("%j", str(job.job_id)),
    }
    status = FROM_SLURM.get(job.state)
    unchanged = all(getattr(run, name) == value for name, value in fields.items())
    if unchanged and status in (None, run.status):
        return  # most cycles, for most runs: no write at all
    if status and status != run.status:
        reason = explain(job, status)
        if transition(run.pk, status, status_reason=reason, **fields):
            return
    BenchmarkRun.objects.filter(pk=run.pk).update(updated_at=timezone.now(), **fields)


def explain(job: SlurmJob, status: RunStatus) -> str:
    """What to tell the user about a job that ended otherwise than well."""
    where = (
        f"Job {job.job_id}; its output is in {job.standard_output.replace('%j', str(job.job_id))}."
    )
    if status == RunStatus.FAILED:
        if job.reason == "JobLaunchFailure":
            return f"Slurm could not start the job (missing or unwritable directory?). {where}"
        code = f"signal {job.signal}" if job.signal else f"exit code {job.return_code}"
        return f"The job failed ({code}, {job.reason or job.state}). {where}"
    if status == RunStatus.TIMED_OUT:
        return f"The job hit its time limit and was stopped. {where}"
    if status == RunStatus.CANCELLED:
        return f"The job was cancelled. {where}"
    return ""


def sync() -> int | None:
    """One cycle of following runs: ONE `GET /jobs` for all active runs, whatever
    their number. Returns how many runs it looked at (None if skipped)."""
    if not cache.add(SYNC_LOCK_KEY, 1, timeout=settings.SYNC_LOCK_SECONDS):
        return None  # the previous cycle still runs
    try:
        _resubmit_stale()
        runs = list(BenchmarkRun.objects.filter(status__in=IN_SLURM_STATUSES))
        if not runs:
            return 0
        started = timezone.now()
        since: datetime | None = cache.get(SYNC_SINCE_KEY)
        if since:
            since -= timedelta(seconds=5)  # slack for clocks and same-second updates
        jobs = get_client().jobs(settings.SLURM_SERVICE_USER, since=since)
        if jobs is None:
            return len(runs)  # 304: nothing changed since the last cycle
        by_id = {job.job_id: job for job in jobs}
        grace = started - timedelta(seconds=settings.SUBMIT_LEASE_SECONDS)
        for run in runs:
            job = by_id.get(run.slurm_job_id)
            if job is not None:
                apply_job(run, job)
            elif run.submitted_at and run.submitted_at < grace:
                _job_vanished(run)
        cache.set(SYNC_SINCE_KEY, started, timeout=None)
        return len(runs)
    finally:
        cache.delete(SYNC_LOCK_KEY)


def _job_vanished(run: BenchmarkRun) -> None:
    """Slurm no longer lists the job (purged, or slurmctld lost its state). Lost,
    unless its output came back: checked in the UPDATE itself, as the output may
    arrive while this cycle runs (and if it comes later, `ingest` brings it back)."""
    lost = transition(
        run.pk,
        RunStatus.LOST,
        provided={"result_received_at__isnull": True},
        status_reason=f"Slurm no longer knows job {run.slurm_job_id}, and no result came "
        f"back. Its output file, if any, is in {run.target_directory}.",
    )
    if not lost:
        transition(run.pk, RunStatus.COMPLETED, status_reason="")


def _resubmit_stale() -> None:
    """Queued runs whose submit task gave up (a long outage) or vanished get a new one."""
    from jobs.tasks import submit_run

    lease = timezone.now() - timedelta(seconds=settings.SUBMIT_LEASE_SECONDS)
    stale = BenchmarkRun.objects.filter(status=RunStatus.QUEUED, created_at__lt=lease).exclude(
        submit_attempted_at__gt=lease
    )
    run_ids = list(stale.values_list("pk", flat=True)[:100])
    scheduled = cache.get_many([_scheduled_key(run_id) for run_id in run_ids])
    for run_id in run_ids:
        if _scheduled_key(run_id) not in scheduled:
            submit_run.delay(run_id)


# --- results --------------------------------------------------------------------------


class ResultRefused(Exception):
    def __init__(self, status: int, message: str):
        self.status = status
        super().__init__(message)


def receive_result(run: BenchmarkRun, token: str, output: bytes, exit_code: int | None) -> None:
    """Stores the job's output once. Raises ResultRefused for a wrong secret or a
    second post."""
    if not hmac.compare_digest(token_hash(token), run.result_token_hash):
        raise ResultRefused(403, "wrong result token")
    stored = BenchmarkRun.objects.filter(pk=run.pk, result_received_at__isnull=True).update(
        result_received_at=timezone.now(),
        updated_at=timezone.now(),
        raw_output=output.decode("utf-8", errors="replace").replace("\x00", ""),
        benchmark_exit_code=exit_code,
    )
    if not stored:
        raise ResultRefused(409, "a result was already received for this run")
    from jobs.tasks import ingest_result

    transaction.on_commit(lambda: ingest_result.delay(run.pk))


def ingest(run_id: int) -> None:
    """Parses a received output into a RunResult (idempotent)."""
    run = BenchmarkRun.objects.get(pk=run_id)
    if not run.result_received_at or RunResult.objects.filter(run=run).exists():
        return
    try:
        result = get_engine(run.engine).parse(run.raw_output)
    except ResultParseError as e:
        exit_note = ""
        if run.benchmark_exit_code:
            exit_note = f" ({run.engine} exited with status {run.benchmark_exit_code})"
        BenchmarkRun.objects.filter(pk=run.pk).update(
            parse_error=f"{e}{exit_note}", updated_at=timezone.now()
        )
        _found(run)
        return
    RunResult.objects.get_or_create(
        run=run,
        defaults={
            "engine": result.engine,
            "processes": result.processes,
            "write_bytes_per_s": result.write_bytes_per_s,
            "read_bytes_per_s": result.read_bytes_per_s,
            "write_iops": result.write_iops,
            "read_iops": result.read_iops,
            "write_latency_us": result.write_latency.model_dump() if result.write_latency else None,
            "read_latency_us": result.read_latency.model_dump() if result.read_latency else None,
        },
    )
    BenchmarkRun.objects.filter(pk=run.pk).update(updated_at=timezone.now())
    _found(run)


def _found(run: BenchmarkRun) -> None:
    """A run the sync had given up on did finish after all: its output came. (Active
    runs are left to the sync: Slurm has the last word on how the job ended.)"""
    transition(run.pk, RunStatus.COMPLETED, only_from=(RunStatus.LOST,), status_reason="")


# --- cancel ---------------------------------------------------------------------------


def cancel(run: BenchmarkRun) -> bool:
    """Cancels a run: before submission at once, else through Slurm. Transient
    Slurm errors propagate so the caller can say "try again"."""
    if run.status == RunStatus.QUEUED:
        return transition(run.pk, RunStatus.CANCELLED, status_reason="Cancelled before it started.")
    if run.status in IN_SLURM_STATUSES and run.slurm_job_id:
        get_client().cancel(run.cluster_username, run.slurm_job_id)
        return True
    return False
