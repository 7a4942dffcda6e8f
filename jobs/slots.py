"""Slots: how many runs a user may have going at once, and which waiting run goes next.

A user may have MAX_ACTIVE_RUNS_PER_USER runs going (ACTIVE_STATUSES: from QUEUED to
their end), and in a course that course's `max_active_runs`. Runs asked for beyond
that are saved WAITING (exercises/lab/start.py); `promote` moves them to QUEUED, oldest
first, as slots free up. A waiting run whose course is full lets the user's later
runs of other courses (or of none) go first: each course keeps its own order.

A click's new runs need no promotion when none of the user's runs waits already:
`admit` marks those that fit before they are saved, so they are saved queued.

Who calls `promote`: start_runs for the runs it has just saved when older runs
wait (they go first), a cancel of a queued run (jobs/submission.py: cancel), and
every sync cycle for every user with waiting runs (`users_who_may_move`): the cycle
sees each end Slurm reports, and catches any other freed slot (a submission that
failed, a crashed worker) within a cycle.

Two promoters (the sync, a cancel, a click) never fill one slot twice: each holds
the user's cluster account row, the lock start_runs holds while it saves runs, and
counts only once it holds it. Each promotion is a conditional UPDATE
(jobs/states.py): a cancel landing meanwhile wins or loses whole, and a cancelled run
is skipped for the next one. This module decides; jobs/submission.py (queue_waiting)
hands the promoted runs to Slurm.
"""

from collections import Counter

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Q

from jobs.models import ACTIVE_STATUSES, BenchmarkRun, RunStatus
from jobs.states import transition, transition_many
from portal.models import ClusterAccount

NO_ACCOUNT_REASON = (
    "This run waited for a free slot, but your portal login no longer has a cluster "
    "account to run it as. Ask your instructor or the HPC support team to link one, "
    "then start the exercise again."
)


def promote(user_id: int) -> list[BenchmarkRun]:
    """Moves the user's waiting runs that fit in their free slots to QUEUED, oldest
    first, and returns them (not yet enqueued: see submission.queue_waiting)."""
    # Inside start_runs' transaction no savepoint: a failure here fails the click whole.
    with transaction.atomic(savepoint=False):
        # The lock first: what follows is read once no other promoter or click holds it.
        account = ClusterAccount.objects.select_for_update().filter(user_id=user_id)
        has_account = account.values_list("pk", flat=True).first() is not None
        waiting = list(
            BenchmarkRun.objects.filter(user_id=user_id, status=RunStatus.WAITING)
            .select_related("course", "target")
            .order_by("created_at", "pk")
        )
        if not waiting:
            return []
        if not has_account:
            for run in waiting:
                transition(run.pk, RunStatus.FAILED, status_reason=NO_ACCOUNT_REASON)
            return []
        user_going, course_going = going(user_id)
        user_free = settings.MAX_ACTIVE_RUNS_PER_USER - user_going
        promoted: list[BenchmarkRun] = []
        while chosen := _fitting(waiting, user_free, course_going):
            # One UPDATE for them all. A run cancelled meanwhile does not move, and its
            # slot goes to the next waiting run in the following round.
            moved = transition_many(
                [run.pk for run in chosen], RunStatus.QUEUED, only_from=(RunStatus.WAITING,)
            )
            for run in chosen:
                if run.pk in moved:
                    run.status = RunStatus.QUEUED
                    promoted.append(run)
                    user_free -= 1
                    if run.course:
                        course_going[run.course.pk] += 1
            waiting = [run for run in waiting if run not in chosen]
        return promoted


def admit(user_id: int, runs: list[BenchmarkRun]) -> bool:
    """For a click's new runs (WAITING, not yet saved), by a caller holding the user's
    cluster account row: when none of the user's runs waits, marks QUEUED those that
    fit in the free slots, as `promote` would once they are saved, and returns True.
    Else False, and nothing marked: older waiting runs go first (save these, then
    promote) (1 query)."""
    counts = (
        BenchmarkRun.objects.filter(
            user_id=user_id, status__in=(*ACTIVE_STATUSES, RunStatus.WAITING)
        )
        .values_list("course_id")
        .annotate(
            going=Count("pk", filter=Q(status__in=ACTIVE_STATUSES)),
            waiting=Count("pk", filter=Q(status=RunStatus.WAITING)),
        )
        .order_by()
    )
    course_going: Counter = Counter()
    for course_id, going_in_course, waiting in counts:
        if waiting:
            return False
        course_going[course_id] = going_in_course
    user_free = settings.MAX_ACTIVE_RUNS_PER_USER - sum(course_going.values())
    # One pass is promote's whole loop here: no run can be cancelled meanwhile.
    for run in _fitting(runs, user_free, course_going):
        run.status = RunStatus.QUEUED
    return True


def _fitting(
    waiting: list[BenchmarkRun], user_free: int, course_going: Counter
) -> list[BenchmarkRun]:
    """The oldest of `waiting` that fit in `user_free` slots, each within its course's
    free slots; a run whose course is full lets later runs of other courses go first."""
    chosen: list[BenchmarkRun] = []
    taken: Counter = Counter()
    for run in waiting:
        if len(chosen) >= user_free:
            break
        course = run.course
        if course and course_going[course.pk] + taken[course.pk] >= course.max_active_runs:
            continue  # waits for a slot in its course
        chosen.append(run)
        if course:
            taken[course.pk] += 1
    return chosen


def going(user_id: int) -> tuple[int, Counter]:
    """The user's runs holding a slot: all of them, and per course (1 query)."""
    per_course = Counter(
        dict(
            BenchmarkRun.objects.filter(user_id=user_id, status__in=ACTIVE_STATUSES)
            .values_list("course_id")
            .annotate(n=Count("pk"))
            .order_by()
        )
    )
    return sum(per_course.values()), per_course


def users_who_may_move() -> list[int]:
    """Users with waiting runs and a free slot under the user cap (their courses'
    caps are checked by `promote`) (1 query)."""
    waiting = BenchmarkRun.objects.filter(status=RunStatus.WAITING).values("user_id")
    counts = (
        BenchmarkRun.objects.filter(user_id__in=waiting)
        .values("user_id")
        .annotate(n=Count("pk", filter=Q(status__in=ACTIVE_STATUSES)))
        .filter(n__lt=settings.MAX_ACTIVE_RUNS_PER_USER)
        .order_by("user_id")
    )
    return [row["user_id"] for row in counts]


def waiting_places(user_id: int) -> dict[int, int]:
    """Run id -> its place among the user's waiting runs (1: next to start)."""
    waiting = BenchmarkRun.objects.filter(user_id=user_id, status=RunStatus.WAITING)
    ids = waiting.order_by("created_at", "pk").values_list("pk", flat=True)
    return {run_id: place for place, run_id in enumerate(ids, start=1)}
