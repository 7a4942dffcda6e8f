"""Races and refusals around submission, on the live dev cluster: a cancel meeting
a submission, a job planted under a run's name, a job the portal cannot write, and
a retry after an outage that must queue in the rate limit again."""

from pathlib import Path

import pytest

from jobs import handover
from jobs.handover import submit, submit_run
from jobs.models import BenchmarkRun, RunStatus
from jobs.slurm import SlurmConnectionError, get_client
from jobs.slurm.models import JobState
from jobs.submission import cancel
from tests.cluster import cpu_hog, trivial_job, wait_for_status
from tests.runs import make_run

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.alone("holds every CPU of the cluster")
def test_a_cancel_that_meets_the_submission_cancels_the_slurm_job(
    live_portal, trainee_account, disk_target, scratch_dir
) -> None:
    """The trainee clicks cancel on the page read while the run was queued; the
    submission commits in between. The job must not be left running."""
    blocker = get_client().submit(trainee_account.username, cpu_hog(scratch_dir))
    try:
        run = make_run(trainee_account, disk_target)
        as_the_page_saw_it = BenchmarkRun.objects.get(pk=run.pk)  # queued
        submit(run.pk)
        run = wait_for_status(run, RunStatus.SUBMITTED, RunStatus.PENDING)

        assert cancel(as_the_page_saw_it)

        job = get_client().job(trainee_account.username, run.slurm_job_id)
        assert job.state == JobState.CANCELLED
    finally:
        get_client().cancel(trainee_account.username, blocker)


def test_a_job_planted_under_a_runs_name_is_never_adopted(
    live_portal, trainee_account, make_cluster_username, disk_target
) -> None:
    intruder = make_cluster_username()
    run = make_run(trainee_account, disk_target, time_limit_minutes=2)
    # An earlier attempt may have reached Slurm: the retry looks for its job.
    BenchmarkRun.objects.filter(pk=run.pk).update(submit_attempted_at="2000-01-01T00:00Z")
    planted = trivial_job(Path("/srv/storagelab/scratch") / intruder, "sleep 30")
    planted = planted.model_copy(update={"name": run.job_name})
    planted_id = get_client().submit(intruder, planted)
    try:
        submit(run.pk)

        run.refresh_from_db()
        assert run.slurm_job_id and run.slurm_job_id != planted_id
        assert (
            get_client().job(trainee_account.username, run.slurm_job_id).user_name
            == trainee_account.username
        )
    finally:
        get_client().cancel(intruder, planted_id)


def test_a_job_the_portal_cannot_write_fails_with_the_reason_and_is_not_retried(
    live_portal, trainee_account, disk_target
) -> None:
    run = make_run(trainee_account, disk_target, time_limit_minutes=5000)  # beyond any JobSpec

    submit(run.pk)

    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    assert "could not write this job" in run.status_reason
    assert "time_limit_minutes" in run.status_reason
    assert run.slurm_job_id is None


def test_a_retry_after_an_outage_takes_a_place_in_the_rate_limit_again(monkeypatch) -> None:
    retried = {}

    def away(run_id: int, *, slot_taken: bool = False) -> None:
        raise SlurmConnectionError("slurmrestd away")

    def retry(**options):
        retried.update(options)
        raise RuntimeError("retried")

    monkeypatch.setattr(handover, "submit", away)
    monkeypatch.setattr(submit_run, "retry", retry)

    # The run had waited for its place once (slot_taken) when slurmrestd went away.
    with pytest.raises(RuntimeError, match="retried"):
        submit_run.run(42, slot_taken=True)

    assert retried["args"] == (42,) and retried["kwargs"] == {"slot_taken": False}
