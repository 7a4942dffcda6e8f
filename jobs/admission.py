"""Admission: the rules every run the portal sends to Slurm passes, in one place, whoever
starts it: the lab, a replay, the canaries, a calibration round.

`admit(account, runs)` takes runs built and not saved (jobs/submission.py: new_run)
and, holding the account's row, saves them all or none, raising Refused with what to
tell the user otherwise:

1. the bound of files: no run makes more than `max_files` files at once, where its
   caller has a bound (a replay: REPLAY_MAX_FILES; an exercise is the site's own,
   sized by its profile);
2. the quota: each run's bytes (whole blocks a file) and files fit in what is left of
   the account's quota on its target (jobs/room.py), by the rule exercises/quotas
   registers here from its ready() (`register_quota`): the bottom app asks, the app
   above answers, as health checks plug into portal/health.py. Every caller gets it
   and none can leave it out, as the canaries once did;
3. the user's slots: the runs that fit in their free slots are saved queued, the others
   waiting for one, and at most MAX_WAITING_RUNS_PER_USER may wait (jobs/slots.py).

The queued runs' submission is sent once the caller's transaction commits, in one
Celery message (jobs/handover.py: submit_runs): there each run takes its place in
the rate limit (jobs/ratelimit.py) and goes to Slurm. A request never talks to Slurm
to start a job. A run saved waiting is queued by `queue_waiting` once a slot frees
up: at the end of the sync cycle that saw a run end, at once after a cancel. A job
that is no benchmark run (a storage scan, a purge) takes the second half of this road:
jobs/app_jobs.py.

An exemption is a named argument, given by its caller, which says why:
`slots=False` for runs a starter paces itself and that are no person's (the canaries,
one per target at a time under the weather's lock; a calibration round,
CALIBRATION_PARALLEL at a time).
"""

import logging
from collections.abc import Callable
from functools import partial

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from kombu.exceptions import OperationalError as BrokerUnavailable

from jobs import slots as user_slots
from jobs.handover import note_waiting, submit_runs
from jobs.models import BenchmarkRun, RunStatus
from jobs.room import files_at_once
from portal.models import ClusterAccount

log = logging.getLogger(__name__)

# What a run refused by these rules, and saved all the same to say so, says first
# (a calibration round counts such runs; the canaries show them as a reading's problem).
NOT_RUN = "Not run:"


class Refused(Exception):
    """No run was saved; the message says why and what to do."""


# For each run, why its files would not fit in what is left of the account's quota on
# its target, or None (one query for them all).
QuotaRule = Callable[[ClusterAccount, list[BenchmarkRun]], list[str | None]]
_quota_rules: list[QuotaRule] = []


def register_quota(rule: QuotaRule) -> None:
    """The quota rule, from exercises/quotas' ready(): one, however often ready() runs."""
    _quota_rules[:] = [rule]


def admit(
    account: ClusterAccount,
    runs: list[BenchmarkRun],
    *,
    slots: bool = True,
    max_files: int | None = None,
    account_held: bool = False,
) -> list[BenchmarkRun]:
    """Saves `runs` of `account`, queued or waiting for a slot, and has the queued ones
    submitted once the caller's transaction commits; returns them in their order (a
    queued one as its enqueueing holds it: it says when the task queue is down). Or
    Refused, and nothing saved. `slots=False`: every run queued, none counted against
    the user's slots (the caller paces them). `max_files`: the most files at once.
    `account_held`: the caller holds the account's row already (select_for_update in
    its transaction, as the lab's start and a replay do, under their own rules)."""
    if not runs:
        return []
    # No savepoint (a start's queries are counted): a refusal before anything is
    # saved leaves the caller's transaction as it was (a calibration round goes on);
    # one after (the waiting cap) fails it whole, as a click's start fails whole.
    with transaction.atomic(savepoint=False):
        if not account_held:
            # The lock first: two starts of one account are checked one after the other.
            held = ClusterAccount.objects.select_for_update().filter(pk=account.pk)
            held.values_list("pk").first()
        refusal = _files_refusal(runs, max_files) or _quota_refusal(account, runs)
        if refusal is None:
            return _into_slots(account.user_id, runs) if slots else _queued(runs)
    raise Refused(refusal)


def _queued(runs: list[BenchmarkRun]) -> list[BenchmarkRun]:
    for run in runs:
        run.status = RunStatus.QUEUED
    BenchmarkRun.objects.bulk_create(runs)
    enqueue_once_committed(runs)
    return runs


def refused_run(run: BenchmarkRun, why: str) -> BenchmarkRun:
    """Saves a run these rules refused, failed and never sent to Slurm, saying why, for
    a starter that keeps a record of what it could not run (a calibration round's
    summary, a canary's reading)."""
    run.status = RunStatus.FAILED
    run.status_reason = f"{NOT_RUN} {why}"
    run.save()
    return run


def _files_refusal(runs: list[BenchmarkRun], max_files: int | None) -> str | None:
    if max_files is None:
        return None
    for run in runs:
        files = files_at_once(run.workload_params)
        if files > max_files:
            return (
                f"This run would make {files:,} files at once on {run.target.name}, more than "
                f"the {max_files:,} this site allows: every file takes an inode of a "
                "filesystem other users share. Nothing was started."
            )
    return None


def _quota_refusal(account: ClusterAccount, runs: list[BenchmarkRun]) -> str | None:
    if not _quota_rules:
        raise ImproperlyConfigured(
            "No quota rule is registered: exercises.quotas registers it from its ready() "
            "(jobs/admission.py: register_quota). Is it in INSTALLED_APPS?"
        )
    problems = _quota_rules[0](account, runs)
    # One sentence per target, however many of the runs go there.
    said = dict.fromkeys(p for p in problems if p)
    return " ".join(said) or None


def _into_slots(user_id: int, runs: list[BenchmarkRun]) -> list[BenchmarkRun]:
    """The runs in the user's free slots saved queued, the others waiting; older
    waiting runs go first (jobs/slots.py)."""
    for run in runs:
        run.status = RunStatus.WAITING
    admitted = user_slots.admit(user_id, runs)  # those that fit are saved queued
    BenchmarkRun.objects.bulk_create(runs)
    if admitted:
        queued = {run.pk: run for run in runs if run.status == RunStatus.QUEUED}
        enqueue_once_committed(list(queued.values()))
    else:  # older waiting runs go first; then these, as far as the slots go
        queued = {run.pk: run for run in queue_waiting(user_id)}
    _check_waiting_cap(user_id, runs, queued)
    return [queued.get(run.pk, run) for run in runs]


def _check_waiting_cap(
    user_id: int, runs: list[BenchmarkRun], queued: dict[int, BenchmarkRun]
) -> None:
    """Raised inside the transaction: nothing of the start is kept. `runs` are the start's,
    `queued` what the promotion queued (older waiting runs first). A start whose runs
    were all queued leaves no more runs waiting than before: no query."""
    if all(run.pk in queued for run in runs):
        return
    limit = settings.MAX_WAITING_RUNS_PER_USER
    waiting = BenchmarkRun.objects.filter(user_id=user_id, status=RunStatus.WAITING).count()
    if waiting > limit:
        asked = len(runs)
        still_waiting = sum(1 for run in runs if run.pk not in queued)
        older_queued = len(queued.keys() - {run.pk for run in runs})
        waited = waiting - still_waiting + older_queued
        raise Refused(
            f"This would leave {waiting} of your runs waiting for a free slot ({waited} "
            f"wait already, and {asked} more were asked for); at most {limit} may wait. "
            "Choose fewer targets or fewer repeats, or cancel some waiting runs, or try "
            "again once some have started."
        )


# What a queued run held up by an outage tells the trainee (cleared once submitted).
BROKER_DOWN_REASON = (
    "The portal's task queue did not answer when this run was started. The run waits "
    "here and goes to the cluster by itself once the queue is back."
)


def queue_waiting(user_id: int) -> list[BenchmarkRun]:
    """Queues the user's waiting runs that fit in their free slots (jobs/slots.py),
    and enqueues their submission once that is committed. Returns them."""
    promoted = user_slots.promote(user_id)
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
    for user_id in user_slots.users_who_may_move():
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
        note_waiting(ids, BROKER_DOWN_REASON)
