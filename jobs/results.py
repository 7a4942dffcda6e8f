"""Result intake: the job posts its benchmark output with the run's secret; it is
stored once, then parsed by a Celery task into a RunResult."""

import hashlib
import hmac
import logging
import re
from datetime import timedelta

from celery import shared_task
from django.db import transaction
from django.utils import timezone

from jobs import lost
from jobs.engines import ResultParseError, get_engine
from jobs.engines.base import METADATA_OPERATIONS
from jobs.models import BenchmarkRun, RunResult

log = logging.getLogger(__name__)

# A stored result's ingest task normally runs within a second; one still unparsed
# after this long was lost (or waits behind a long queue: ingesting twice is harmless).
INGEST_GRACE_SECONDS = 30
INGEST_STRANDED_PER_CYCLE = 50


class ResultRefused(Exception):
    def __init__(self, status: int, message: str):
        self.status = status
        super().__init__(message)


def token_hash(token: str) -> str:
    """Only this hash of a run's result secret is stored."""
    return hashlib.sha256(token.encode()).hexdigest()


def check_token(run: BenchmarkRun, token: str) -> None:
    if not hmac.compare_digest(token_hash(token), run.result_token_hash):
        raise ResultRefused(403, "wrong result token")


def header_number(value: str, name: str, low: int, high: int) -> int:
    """A header that must hold a plain decimal number in [low, high]; else 400."""
    if not re.fullmatch(r"-?[0-9]{1,12}", value) or not low <= int(value) <= high:
        raise ResultRefused(400, f"{name} must be a number from {low} to {high}")
    return int(value)


def receive_result(run: BenchmarkRun, token: str, output: bytes, exit_code: int | None) -> None:
    """Stores the job's output once. Raises ResultRefused for a wrong secret or a
    second post."""
    check_token(run, token)
    stored = BenchmarkRun.objects.filter(pk=run.pk, result_received_at__isnull=True).update(
        result_received_at=timezone.now(),
        updated_at=timezone.now(),
        raw_output=output.decode("utf-8", errors="replace").replace("\x00", ""),
        benchmark_exit_code=exit_code,
    )
    if not stored:
        raise ResultRefused(409, "a result was already received for this run")
    # Robust: with the broker down the result is stored all the same, the job is
    # told so, and the sync parses it later (ingest_stranded).
    transaction.on_commit(lambda: ingest_result.delay(run.pk), robust=True)


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
        lost.output_arrived(run.pk)
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
            **{f"{op}_ops_s": getattr(result, f"{op}_ops_s") for op in METADATA_OPERATIONS},
        },
    )
    BenchmarkRun.objects.filter(pk=run.pk).update(updated_at=timezone.now())
    lost.output_arrived(run.pk)


def ingest_stranded() -> int:
    """Parses the results stored INGEST_GRACE_SECONDS ago or more whose ingest task
    never ran: the broker was down when they came, or the worker died holding the
    task. Called by every sync cycle, a few at a time. Returns how many."""
    stranded = BenchmarkRun.objects.filter(
        result_received_at__lte=timezone.now() - timedelta(seconds=INGEST_GRACE_SECONDS),
        result__isnull=True,
        parse_error="",
    ).values_list("pk", flat=True)[:INGEST_STRANDED_PER_CYCLE]
    ingested = 0
    for run_id in stranded:
        try:
            ingest(run_id)
        except Exception:  # one run's trouble must not stop the sync cycle
            log.exception("run %s: its stored result could not be ingested", run_id)
            continue
        ingested += 1
    return ingested


# The name is the one queued messages carry (the task lived in jobs/tasks.py).
@shared_task(name="jobs.tasks.ingest_result")
def ingest_result(run_id: int) -> None:
    ingest(run_id)
