"""Starting and cancelling runs: a run is built (`new_run`), admitted and queued or
saved waiting for a slot (jobs/admission.py; `start_run` for one run), then handed to
Slurm exactly once (jobs/handover.py).

`cancel` takes a run back, waiting, before or after it reached Slurm; a cancel that
comes while the submission is in flight is honoured by the handover itself.
"""

import secrets
from typing import Protocol

from django.db.models import Model, QuerySet

from jobs.admission import admit, queue_waiting
from jobs.engines import Workload, get_engine
from jobs.models import ACTIVE_STATUSES, IN_SLURM_STATUSES, BenchmarkRun, RunStatus
from jobs.results import token_hash
from jobs.slurm import SlurmError, get_client
from jobs.states import transition
from portal.models import ClusterAccount


class RunTarget(Protocol):
    """What a run needs of its storage target (a catalogue.StorageTarget): the jobs
    know targets by this, and by the foreign key, never by the catalogue's code."""

    in_memory: bool

    def directory_for(self, cluster_username: str, spread: bool = False) -> str: ...


def start_run(
    account: ClusterAccount,
    target: RunTarget,
    workload: Workload,
    *,
    slots: bool = True,
    max_files: int | None = None,
    **run: object,
) -> BenchmarkRun:
    """One run (new_run) through admission's rules (jobs/admission.py: admit, and its
    named exemptions), saved queued or waiting for a slot; admission.Refused if the
    rules refuse it. Its submission is enqueued once the row is committed."""
    (saved,) = admit(
        account, [new_run(account, target, workload, **run)], slots=slots, max_files=max_files
    )
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
    `waiting` for a slot. No rule is checked here: every starter hands its runs to
    jobs/admission.py (admit), which checks the rules every run passes (the bound of
    files, the quota, the user's slots), saves them and enqueues their submission."""
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
