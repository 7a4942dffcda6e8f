"""How Slurm's word moves a run, and what the user is told (recorded responses of
newer Slurm releases stand in for states the dev cluster cannot reach quickly)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from jobs import lost
from jobs.models import BenchmarkRun, RunStatus
from jobs.results import ingest
from jobs.slurm.adapters import parse_job
from jobs.states import transition
from jobs.sync import apply_job
from tests.jobs.recorded import find
from tests.runs import make_run

pytestmark = pytest.mark.django_db


def recorded_job(state: str):
    return parse_job(find("25.11-v0.0.44").raw_job(state))


@pytest.fixture
def run(make_user, disk_target) -> BenchmarkRun:
    account = make_user("sl-trainee8").cluster_account
    submitted = timezone.now() - timedelta(hours=1)
    return make_run(
        account, disk_target, status=RunStatus.RUNNING, slurm_job_id=1, submitted_at=submitted
    )


def test_a_job_over_its_time_limit_is_timed_out_with_the_reason(run) -> None:
    job = recorded_job("timeout")

    apply_job(run, job)

    run.refresh_from_db()
    assert run.status == RunStatus.TIMED_OUT
    assert "time limit" in run.status_reason
    assert str(job.job_id) in run.status_reason
    assert run.ended_at == job.end_time


def test_a_failed_job_reports_exit_code_and_output_path(run) -> None:
    job = recorded_job("failed")

    apply_job(run, job)

    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    assert "exit code 1" in run.status_reason
    assert "NonZeroExitCode" in run.status_reason
    assert run.output_path and run.output_path in run.status_reason


def test_a_finished_run_does_not_go_back_to_running(run) -> None:
    apply_job(run, recorded_job("completed"))
    run.refresh_from_db()
    apply_job(run, recorded_job("running"))

    run.refresh_from_db()
    assert run.status == RunStatus.COMPLETED


def test_a_transition_happens_once(run) -> None:
    assert transition(run.pk, RunStatus.CANCELLED)
    assert not transition(run.pk, RunStatus.CANCELLED)
    assert not transition(run.pk, RunStatus.RUNNING)


def test_a_completed_run_without_result_says_so_after_the_grace_period(run, settings) -> None:
    apply_job(run, recorded_job("completed"))
    run.refresh_from_db()

    settings.RESULT_GRACE_SECONDS = 10**9
    assert not run.result_missing
    settings.RESULT_GRACE_SECONDS = 0
    assert run.result_missing


def test_a_run_whose_output_arrives_while_the_sync_finds_its_job_gone_is_not_lost(run) -> None:
    """The sync reads the run, then the output is posted, then the sync sees that
    Slurm has forgotten the job: the run completed; it must not be left lost."""
    as_the_sync_read_it = BenchmarkRun.objects.get(pk=run.pk)
    BenchmarkRun.objects.filter(pk=run.pk).update(
        result_received_at=timezone.now(), raw_output="{}"
    )

    lost.job_not_listed(as_the_sync_read_it, timezone.now())

    run.refresh_from_db()
    assert run.status == RunStatus.COMPLETED


def test_a_lost_run_whose_garbled_output_arrives_is_completed_with_the_parse_error(run) -> None:
    lost.job_not_listed(run, timezone.now())
    run.refresh_from_db()
    assert run.status == RunStatus.LOST
    BenchmarkRun.objects.filter(pk=run.pk).update(
        result_received_at=timezone.now(), raw_output='{"jobs": [{"write"'
    )

    ingest(run.pk)

    run.refresh_from_db()
    assert run.status == RunStatus.COMPLETED
    assert run.parse_error and not hasattr(run, "result")


def test_slurms_forecasts_are_not_recorded_as_what_happened(run) -> None:
    """A pending job's start_time is when Slurm expects to start it, a running job's
    end_time its start plus the time limit; the scheduler moves both every few cycles."""
    pending = recorded_job("pending")
    soon = timezone.now() + timedelta(minutes=20)
    BenchmarkRun.objects.filter(pk=run.pk).update(status=RunStatus.PENDING)
    run.refresh_from_db()

    apply_job(run, pending.model_copy(update={"start_time": soon, "end_time": soon}))
    run.refresh_from_db()
    assert (run.status, run.started_at, run.ended_at) == (RunStatus.PENDING, None, None)
    seen = run.updated_at
    # A later forecast is no change to the run (its panel is not redrawn for it).
    later = soon + timedelta(minutes=7)
    apply_job(run, pending.model_copy(update={"start_time": later, "end_time": later}))
    run.refresh_from_db()
    assert run.updated_at == seen
    # Nor is a new reason to wait: the run's own page shows it, the lists need not.
    apply_job(run, pending.model_copy(update={"reason": "PartitionDown"}))
    run.refresh_from_db()
    assert (run.slurm_reason, run.updated_at) == ("PartitionDown", seen)

    running = recorded_job("running")
    apply_job(run, running.model_copy(update={"end_time": later}))
    run.refresh_from_db()
    assert run.status == RunStatus.RUNNING
    assert run.started_at == running.start_time is not None
    assert run.ended_at is None  # "ended" only once it has
