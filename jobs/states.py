"""The run state machine: which status may follow which, in one place.

Every change of status goes through `transition()`, a conditional UPDATE: two
workers (the sync loop, a cancel, a late result) racing on the same run cannot
both win, and replaying a transition changes nothing.
"""

from typing import Any

from django.db import connection
from django.utils import timezone

from jobs.models import BenchmarkRun, RunStatus
from jobs.slurm.models import JobState

S = RunStatus
# to-status -> the statuses it may come from.
SOURCES: dict[RunStatus, tuple[RunStatus, ...]] = {
    S.QUEUED: (S.WAITING,),  # a slot freed up (jobs/slots.py)
    S.SUBMITTED: (S.QUEUED,),
    S.PENDING: (S.SUBMITTED,),
    S.RUNNING: (S.SUBMITTED, S.PENDING),
    S.COMPLETED: (S.SUBMITTED, S.PENDING, S.RUNNING, S.LOST),
    S.FAILED: (S.WAITING, S.QUEUED, S.SUBMITTED, S.PENDING, S.RUNNING, S.LOST),
    S.CANCELLED: (S.WAITING, S.QUEUED, S.SUBMITTED, S.PENDING, S.RUNNING, S.LOST),
    S.TIMED_OUT: (S.SUBMITTED, S.PENDING, S.RUNNING, S.LOST),
    S.LOST: (S.SUBMITTED, S.PENDING, S.RUNNING),
}

# Slurm's base states, as run statuses. States not listed change nothing.
FROM_SLURM: dict[JobState, RunStatus] = {
    JobState.PENDING: S.PENDING,
    JobState.RUNNING: S.RUNNING,
    JobState.COMPLETING: S.RUNNING,
    JobState.SUSPENDED: S.RUNNING,
    JobState.COMPLETED: S.COMPLETED,
    JobState.FAILED: S.FAILED,
    JobState.NODE_FAIL: S.FAILED,
    JobState.BOOT_FAIL: S.FAILED,
    JobState.OUT_OF_MEMORY: S.FAILED,
    JobState.DEADLINE: S.TIMED_OUT,
    JobState.TIMEOUT: S.TIMED_OUT,
    JobState.CANCELLED: S.CANCELLED,
    JobState.PREEMPTED: S.CANCELLED,
}


def transition(
    run_id: int,
    to: RunStatus,
    *,
    only_from: tuple[RunStatus, ...] | None = None,
    provided: dict[str, Any] | None = None,
    **fields: Any,
) -> bool:
    """Move run `run_id` to `to` if its current status allows (and is one of
    `only_from`, when given, and its row matches the `provided` lookups, checked in
    the same UPDATE); True if it moved."""
    sources = _sources(to, only_from)
    runs = BenchmarkRun.objects.filter(pk=run_id, status__in=sources, **(provided or {}))
    return runs.update(status=to, updated_at=timezone.now(), **fields) == 1


def transition_many(
    run_ids: list[int], to: RunStatus, *, only_from: tuple[RunStatus, ...] | None = None
) -> set[int]:
    """`transition` for several runs in one UPDATE; the ids of those that moved."""
    table = BenchmarkRun._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} SET status = %s, updated_at = %s "  # noqa: S608 -- our table
            "WHERE id = ANY(%s) AND status = ANY(%s) RETURNING id",
            [to.value, timezone.now(), run_ids, [s.value for s in _sources(to, only_from)]],
        )
        return {run_id for (run_id,) in cursor.fetchall()}


def _sources(to: RunStatus, only_from: tuple[RunStatus, ...] | None) -> list[RunStatus]:
    return [s for s in SOURCES[to] if only_from is None or s in only_from]
