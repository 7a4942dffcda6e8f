"""Result intake: the job posts its benchmark output with the run's secret; it is
stored once, then parsed by a Celery task into a RunResult, on a queue of its own
and within time limits. An output that cannot be read is marked so, once.

A run's secret is good while its job may still post: until RESULT_RETRY_SECONDS (the
time the job script tries its posts for) after the run's end. A secret read from a
job's environment or its script long after (a node's leftovers, a log) is refused;
staff attaching an output (jobs/recover.py) need none."""

import hashlib
import hmac
import logging
import re
from datetime import UTC, datetime, timedelta

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerUnavailable

from jobs import lost
from jobs.engines import ResultParseError, parse_output
from jobs.figures import RATE_FIELDS
from jobs.models import BenchmarkRun, RunResult
from jobs.stored import space_of

log = logging.getLogger(__name__)

# A stored result's ingest task normally runs within a second; one still unparsed
# after this long was lost (or waits behind a long queue: ingesting twice is harmless).
INGEST_GRACE_SECONDS = 30
INGEST_STRANDED_PER_CYCLE = 50
# A parser reads the largest output (RESULT_MAX_BYTES, 4 MiB) in well under a second
# (bench/test_parsers.py): these limits only stop what went wrong.
INGEST_SOFT_LIMIT_SECONDS = 10
INGEST_TIME_LIMIT_SECONDS = 20
# Attempts at reading one output; one more attempt marks it unreadable unread.
MAX_INGEST_ATTEMPTS = 2


class ResultRefused(Exception):
    def __init__(self, status: int, message: str):
        self.status = status
        super().__init__(message)


def token_hash(token: str) -> str:
    """Only this hash of a run's result secret is stored."""
    return hashlib.sha256(token.encode()).hexdigest()


def check_token(run: BenchmarkRun, token: str) -> None:
    """The run's secret, and still within its time (posts_until): else 403. A wrong
    secret is told nothing more."""
    if not hmac.compare_digest(token_hash(token), run.result_token_hash):
        raise ResultRefused(403, "wrong result token")
    until = posts_until(run)
    if until is not None and timezone.now() > until:
        ended = run.ended_at.astimezone(UTC)
        raise ResultRefused(
            403,
            f"this run's result token has expired: its job ended at {ended:%Y-%m-%d %H:%M:%S} "
            f"UTC, and a job's posts are taken for {settings.RESULT_RETRY_SECONDS} s after "
            "its end (RESULT_RETRY_SECONDS)",
        )


def posts_until(run: BenchmarkRun) -> datetime | None:
    """Until when the run's job may post with its secret: its end and the time the job
    script tries for (a job posts before it ends; the rest is room for a clock that
    differs and a post on its way). None: not ended, its job may still post."""
    if run.ended_at is None:
        return None
    return run.ended_at + timedelta(seconds=settings.RESULT_RETRY_SECONDS)


def check_post(run: BenchmarkRun, token: str, content_length: str, max_bytes: int) -> None:
    """What every post of a job is checked for, in this order: the run's secret first
    (only the job learns why else it was refused), then its declared length (413)."""
    check_token(run, token)
    length = header_number(content_length or "0", "Content-Length", 0, 2**62)
    if length > max_bytes:
        raise ResultRefused(413, f"the body is larger than the {max_bytes} bytes taken here")


def header_number(value: str, name: str, low: int, high: int) -> int:
    """A header that must hold a plain decimal number in [low, high]; else 400."""
    if not re.fullmatch(r"-?[0-9]{1,12}", value) or not low <= int(value) <= high:
        raise ResultRefused(400, f"{name} must be a number from {low} to {high}")
    return int(value)


def receive_result(run: BenchmarkRun, token: str, output: bytes, exit_code: int | None) -> None:
    """Stores the job's output once. Raises ResultRefused for a wrong secret or a
    second post."""
    check_token(run, token)
    if not store_output(run, output, exit_code):
        raise ResultRefused(409, "a result was already received for this run")


def store_output(run: BenchmarkRun, output: bytes, exit_code: int | None) -> bool:
    """Stores a run's output unless one came already (False), and has it read once
    the row is committed. The job's post comes here, and so does an output recovered
    from the job's output file (jobs/recover.py)."""
    now = timezone.now()
    stored = BenchmarkRun.objects.filter(pk=run.pk, result_received_at__isnull=True).update(
        result_received_at=now,
        ingest_sent_at=now,
        updated_at=now,
        raw_output=output.decode("utf-8", errors="replace").replace("\x00", ""),
        benchmark_exit_code=exit_code,
    )
    if stored:
        # Robust: with the broker down the output is stored all the same, the job is
        # told so, and the sync sends its task later (send_stranded).
        transaction.on_commit(lambda: ingest_result.delay(run.pk), robust=True)
    return bool(stored)


def ingest(run_id: int) -> None:
    """Parses a received output into a RunResult, or marks why it cannot be read.
    Idempotent, and each output is tried at most MAX_INGEST_ATTEMPTS times: an
    attempt is counted before the parser runs, so an output whose reading was
    killed (the task's hard time limit, a worker lost) is marked, not read forever."""
    tried = BenchmarkRun.objects.filter(
        pk=run_id,
        result_received_at__isnull=False,
        result__isnull=True,
        parse_error="",
        raw_output_dropped_at__isnull=True,
    ).update(ingest_attempts=F("ingest_attempts") + 1)
    if not tried:
        return  # gone, not received yet, already read, already marked, or dropped
    run = (
        BenchmarkRun.objects.select_related("target")
        .only("engine", "raw_output", "benchmark_exit_code", "ingest_attempts", "target__stored_by")
        .get(pk=run_id)
    )
    if run.ingest_attempts > MAX_INGEST_ATTEMPTS:
        unreadable(
            run,
            f"reading this output was stopped {MAX_INGEST_ATTEMPTS} times before it ended "
            f"(its limit is {INGEST_TIME_LIMIT_SECONDS} s, or a worker was lost): it is kept "
            "as it came",
        )
        return
    try:
        result = parse_output(run.engine, run.raw_output)
    except ResultParseError as e:
        reason = str(e)
        if isinstance(e.__cause__, SoftTimeLimitExceeded):
            reason = f"reading this output took longer than {INGEST_SOFT_LIMIT_SECONDS} s"
        unreadable(run, reason)
        return
    except SoftTimeLimitExceeded:  # between the parser and here
        unreadable(run, f"reading this output took longer than {INGEST_SOFT_LIMIT_SECONDS} s")
        return
    # Read only where the job measures it: a line in another run's output is text.
    space = space_of(run.raw_output) if run.target.stored_by else None
    RunResult.objects.get_or_create(
        run=run,
        defaults={
            "held_bytes": space and space.held,
            "stored_bytes": space and space.stored,
            "engine": result.engine,
            "processes": result.processes,
            "write_bytes_per_s": result.write_bytes_per_s,
            "read_bytes_per_s": result.read_bytes_per_s,
            "write_iops": result.write_iops,
            "read_iops": result.read_iops,
            "write_latency_us": result.write_latency.model_dump() if result.write_latency else None,
            "read_latency_us": result.read_latency.model_dump() if result.read_latency else None,
            **{name: getattr(result, name) for name in RATE_FIELDS},
            "series": [list(point) for point in result.series] if result.series else None,
        },
    )
    BenchmarkRun.objects.filter(pk=run.pk).update(updated_at=timezone.now())
    lost.output_arrived(run.pk)


def unreadable(run: BenchmarkRun, reason: str) -> None:
    """Marks the run's output as unreadable, once: the raw output stays for its owner,
    and no sweep tries it again."""
    if run.benchmark_exit_code:
        reason += f" ({run.engine} exited with status {run.benchmark_exit_code})"
    BenchmarkRun.objects.filter(pk=run.pk, parse_error="").update(
        parse_error=reason, updated_at=timezone.now()
    )
    lost.output_arrived(run.pk)


def send_stranded() -> int:
    """Sends an ingest task again for results stored INGEST_GRACE_SECONDS ago or more
    that are still unread: the broker was down when they came, or the worker died
    holding the task. Called by every sync cycle, which never parses (a parse runs on
    the results queue, within its time limits); each result at most once per grace
    period, and a result marked unreadable never. Returns how many were sent."""
    due = timezone.now() - timedelta(seconds=INGEST_GRACE_SECONDS)
    stranded = BenchmarkRun.objects.filter(
        Q(ingest_sent_at__isnull=True) | Q(ingest_sent_at__lte=due),
        result_received_at__lte=due,
        result__isnull=True,
        parse_error="",
        raw_output_dropped_at__isnull=True,  # never an output retention emptied
    )
    run_ids = list(stranded.values_list("pk", flat=True)[:INGEST_STRANDED_PER_CYCLE])
    if not run_ids:
        return 0
    BenchmarkRun.objects.filter(pk__in=run_ids).update(ingest_sent_at=timezone.now())
    for sent, run_id in enumerate(run_ids):
        try:
            ingest_result.delay(run_id)
        except BrokerUnavailable:
            # The rest go at a later cycle; the sync goes on with following runs.
            log.warning("the broker did not take the ingest of run %s", run_id)
            return sent
    return len(run_ids)


# The name is the one queued messages carry (the task lived in jobs/tasks.py). Its
# queue (RESULTS_QUEUE, settings.CELERY_TASK_ROUTES) has a worker of its own: what a
# job posts is the job owner's text, and reading it must never hold the workers that
# submit and follow everyone's runs. A soft limit ends a slow read with a reason, the
# hard one ends the process that ignored it.
@shared_task(
    name="jobs.tasks.ingest_result",
    soft_time_limit=INGEST_SOFT_LIMIT_SECONDS,
    time_limit=INGEST_TIME_LIMIT_SECONDS,
)
def ingest_result(run_id: int) -> None:
    ingest(run_id)
