"""Lost runs: the one place that decides a run is lost, and that it was not.

A run is lost when Slurm no longer lists its job (purged after MinJobAge, or
slurmctld lost its state), LOST_AFTER_SECONDS after its submission, and its output
never came back. A lost run whose output arrives later did finish: it is completed
after all. Both decisions are single conditional UPDATEs (jobs/states.py), so a
result arriving while the sync decides cannot be lost in between.
"""

from datetime import datetime, timedelta

from django.conf import settings

from jobs.models import BenchmarkRun, RunStatus
from jobs.states import transition


def job_not_listed(run: BenchmarkRun, now: datetime) -> None:
    """Slurm's job list (all jobs it holds) has no job for this active run."""
    if run.submitted_at is None or now - run.submitted_at < timedelta(
        seconds=settings.LOST_AFTER_SECONDS
    ):
        return  # just submitted: give Slurm time to list it
    lost = transition(
        run.pk,
        RunStatus.LOST,
        provided={"result_received_at__isnull": True},
        status_reason=f"Slurm no longer knows job {run.slurm_job_id}, and no result came "
        f"back. Its output file, if any, is in {run.target_directory}"
        + (" on the node that ran it." if run.target_variable else "."),
    )
    if not lost:
        # Its output came: the job ended, and (without Slurm's word) it ended well.
        transition(run.pk, RunStatus.COMPLETED, status_reason="")


def output_arrived(run_id: int) -> None:
    """A run given up as lost did finish after all: its output came. (Active runs are
    left to the sync: Slurm has the last word on how their job ended.)"""
    transition(run_id, RunStatus.COMPLETED, only_from=(RunStatus.LOST,), status_reason="")
