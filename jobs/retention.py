"""Retention: what a run keeps only to show what came. A job's raw output (up to
RESULT_MAX_BYTES) is kept RAW_OUTPUT_RETENTION_DAYS after it came, and of each user's
at most RAW_OUTPUT_USER_MAX_MB, their oldest dropped first; an app that keeps more
such bytes with a run registers them here (`register`, from its ready(): jobio's
Darshan logs), and the cap counts them together. What was read from them stays: the
figures (RunResult), a parse error, a run's I/O. Only what has been read is dropped: an
output waiting for its reader is never emptied under it.

Each drop is one UPDATE of at most BATCH runs, in a transaction of its own, so a site
with a million runs never holds one long one; a round does at most ROUND_BATCHES of
them and the next round (Celery beat: drop_raw_outputs) goes on where it stopped."""

import logging
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta

from celery import shared_task
from django.conf import settings
from django.db import models
from django.db.models import F, Q, Sum
from django.utils import dateformat, timezone

from jobs.models import BenchmarkRun
from portal.units import MiB

log = logging.getLogger(__name__)

# Runs per UPDATE: at most 100 × 4 MiB of outputs (or 2 MiB of logs) freed at once.
BATCH = 100
# UPDATEs per round: a round is a few seconds at most, on the runs' queue.
ROUND_BATCHES = 20


class OctetLength(models.Func):
    """The bytes a text or bytea value takes, read from its TOAST header: the value
    itself is not fetched (PostgreSQL's LENGTH of a text would read it to count its
    characters)."""

    function = "OCTET_LENGTH"
    output_field = models.BigIntegerField()


@dataclass(frozen=True)
class Kept:
    """Bytes an app keeps with each run that only show what came.

    `held(now)`: the rows still holding some whose reading is over, annotated with
    `run_id`, `user_id`, `at` (when they came) and `size` (bytes); `drop(run_ids, now)`:
    drops them for these runs, in one UPDATE, and says how many it dropped."""

    what: str
    held: Callable[[datetime], models.QuerySet]
    drop: Callable[[list[int], datetime], int]


def _outputs_held(now: datetime) -> models.QuerySet:
    return (
        BenchmarkRun.objects.filter(
            result_received_at__isnull=False, raw_output_dropped_at__isnull=True
        )
        .filter(Q(result__isnull=False) | ~Q(parse_error=""))  # read, or marked unreadable
        .exclude(raw_output="")
        .annotate(run_id=F("pk"), at=F("result_received_at"), size=OctetLength("raw_output"))
    )


def _drop_outputs(run_ids: list[int], now: datetime) -> int:
    # updated_at stays: nothing a page follows changed (the figures are the same).
    return BenchmarkRun.objects.filter(pk__in=run_ids, raw_output_dropped_at__isnull=True).update(
        raw_output="", raw_output_dropped_at=now
    )


OUTPUTS = Kept("raw outputs", _outputs_held, _drop_outputs)
_registered: list[Kept] = [OUTPUTS]


def register(kept: Kept) -> None:
    """Adds an app's bytes to every round (once, however often ready() runs)."""
    if kept not in _registered:
        _registered.append(kept)


# --- a round ---------------------------------------------------------------------


class _Budget:
    def __init__(self, batches: int) -> None:
        self.left = batches

    def spend(self) -> bool:
        self.left -= 1
        return self.left >= 0


def drop_round(now: datetime) -> int:
    """Drops what is past the retention, then each user's oldest beyond the cap, in at
    most ROUND_BATCHES UPDATEs. Idempotent: what was dropped is not held any more.
    Returns how many outputs and logs were dropped."""
    budget = _Budget(ROUND_BATCHES)
    dropped = 0
    if settings.RAW_OUTPUT_RETENTION_DAYS:
        cutoff = now - timedelta(days=settings.RAW_OUTPUT_RETENTION_DAYS)
        for kept in _registered:
            dropped += _drop_older(kept, cutoff, now, budget)
    if settings.RAW_OUTPUT_USER_MAX_MB:
        dropped += _drop_over_cap(settings.RAW_OUTPUT_USER_MAX_MB * MiB, now, budget)
    return dropped


def _drop_older(kept: Kept, cutoff: datetime, now: datetime, budget: _Budget) -> int:
    dropped = 0
    old = kept.held(now).filter(at__lt=cutoff).order_by("at")
    while budget.left > 0:
        run_ids = list(old.values_list("run_id", flat=True)[:BATCH])
        if not run_ids or not budget.spend():
            break
        dropped += kept.drop(run_ids, now)
    return dropped


def _drop_over_cap(cap: int, now: datetime, budget: _Budget) -> int:
    """Each user holding more than `cap` bytes loses their oldest outputs and logs,
    whichever kind, until they hold no more."""
    totals: Counter[int] = Counter()
    for kept in _registered:
        for user_id, total in (
            kept.held(now).order_by().values("user_id").annotate(total=Sum("size"))
        ).values_list("user_id", "total"):
            totals[user_id] += total or 0
    dropped = 0
    for user_id, total in sorted(totals.items()):
        if total <= cap:
            continue
        for kept, run_ids in _oldest_beyond(user_id, total - cap, now):
            for start in range(0, len(run_ids), BATCH):
                if not budget.spend():
                    return dropped
                dropped += kept.drop(run_ids[start : start + BATCH], now)
    return dropped


def _oldest_beyond(user_id: int, excess: int, now: datetime) -> Iterator[tuple[Kept, list[int]]]:
    """The user's oldest outputs and logs that together weigh `excess` bytes or more."""
    rows = sorted(
        (at, size or 0, i, run_id)
        for i, kept in enumerate(_registered)
        for at, size, run_id in kept.held(now)
        .filter(user_id=user_id)
        .order_by()
        .values_list("at", "size", "run_id")
    )
    chosen: dict[int, list[int]] = {}
    for _at, size, i, run_id in rows:
        if excess <= 0:
            break
        chosen.setdefault(i, []).append(run_id)
        excess -= size
    for i, run_ids in chosen.items():
        yield _registered[i], run_ids


@shared_task(name="jobs.tasks.drop_raw_outputs", soft_time_limit=240, time_limit=300)
def drop_raw_outputs() -> None:
    dropped = drop_round(timezone.now())
    if dropped:
        log.info("retention: dropped %s raw outputs and logs", dropped)


# --- what pages and staff are told ---------------------------------------------------


def dropped_note(run: BenchmarkRun) -> str:
    """Why the run's raw output is not here any more (its page, its download), or ""
    while it is kept."""
    if run.raw_output_dropped_at is None:
        return ""
    when = dateformat.format(timezone.localtime(run.raw_output_dropped_at), "j F Y")
    rules = []
    if settings.RAW_OUTPUT_RETENTION_DAYS:
        rules.append(f"for {settings.RAW_OUTPUT_RETENTION_DAYS} days")
    if settings.RAW_OUTPUT_USER_MAX_MB:
        rules.append(
            f"up to {settings.RAW_OUTPUT_USER_MAX_MB:,} MiB of each person's (their oldest "
            "go first)"
        )
    why = f", as the portal keeps raw outputs {' and '.join(rules)}" if rules else ""
    return f"The raw output was dropped on {when}{why}. What was read from it stays above."
