"""Benchmark runs end to end on the live dev cluster: portal → Celery → slurmrestd
→ a real fio job as the trainee → result posted back → parsed numbers."""

import time
from pathlib import Path

import pytest

from jobs.engines import Pattern
from jobs.handover import submit
from jobs.models import BenchmarkRun, RunStatus
from jobs.slurm import get_client
from jobs.submission import cancel, start_run
from jobs.sync import sync
from tests.cluster import cpu_hog, on_controller, wait_for_status
from tests.cluster24 import answers
from tests.faults.services import FAULT_TIMEOUTS
from tests.runs import follow, make_run, small_workload

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("pattern", [Pattern.SEQUENTIAL, Pattern.RANDOM])
def test_fio_runs_on_disk_and_tmpfs_with_1_and_8_processes(
    live_portal, trainee_account, disk_target, tmpfs_target, pattern
) -> None:
    runs = [
        start_run(trainee_account, target, small_workload(pattern, processes), time_limit_minutes=2)
        for target in (disk_target, tmpfs_target)
        for processes in (1, 8)
    ]

    done = follow(*runs)

    for run in done:
        assert run.status == RunStatus.COMPLETED, run.status_reason or run.parse_error
        assert run.result.write_mib_s > 0
        assert run.result.processes == run.workload_params.processes
        assert run.slurm_job_id and run.output_path.endswith(f"{run.slurm_job_id}.out")
        # The benchmark's own directory is gone, and so is the job's output file once
        # the portal had the output: nothing piles up on the target.
        assert not Path(run.run_directory).exists()
        assert not Path(run.output_path).exists()
    assert not list(Path(disk_target.directory_for(trainee_account.username)).glob("storagelab-*"))


def test_the_job_runs_as_the_trainee_and_the_script_shows_no_secret(
    live_portal, trainee_account, disk_target
) -> None:
    run = start_run(trainee_account, disk_target, small_workload(), time_limit_minutes=2)

    (run,) = follow(run)

    job = get_client().job(trainee_account.username, run.slurm_job_id)
    assert job.user_name == trainee_account.username
    assert "STORAGELAB_RESULT_TOKEN" in run.job_script  # named, never its value
    assert run.result_token_hash not in run.job_script
    assert "--direct=1" not in run.job_script


def test_a_job_that_cannot_start_says_why(live_portal, trainee_account, disk_target) -> None:
    disk_target.path_template = "/srv/storagelab/nowhere/{user}"
    disk_target.save()
    run = start_run(trainee_account, disk_target, small_workload(), time_limit_minutes=2)

    (run,) = follow(run)

    # Slurm starts it (it opens nothing there): the script finds no directory of the
    # user's and runs nothing.
    assert run.status == RunStatus.FAILED
    assert "Nothing was run: the target directory must exist" in run.status_reason
    assert str(run.slurm_job_id) in run.status_reason


@pytest.mark.alone("holds every CPU of the cluster")
def test_a_cancelled_run_says_so_and_leaves_nothing_behind(
    live_portal, trainee_account, disk_target, scratch_dir
) -> None:
    blocker = get_client().submit(trainee_account.username, cpu_hog(scratch_dir))
    try:
        run = start_run(trainee_account, disk_target, small_workload(), time_limit_minutes=2)
        run = wait_for_status(run, RunStatus.SUBMITTED, RunStatus.PENDING)

        assert cancel(run)
        (run,) = follow(run)
    finally:
        get_client().cancel(trainee_account.username, blocker)

    assert run.status == RunStatus.CANCELLED
    assert "cancelled" in run.status_reason
    assert not Path(run.run_directory).exists()


def test_a_queued_run_cancelled_before_submission_never_reaches_slurm(
    live_portal, trainee_account, disk_target
) -> None:
    run = make_run(trainee_account, disk_target)

    assert cancel(run)
    submit(run.pk)

    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED
    assert run.slurm_job_id is None
    assert run.job_name not in {
        job.name for job in get_client().jobs(trainee_account.username) or []
    }


@pytest.mark.alone("stops slurmrestd")
def test_runs_survive_a_slurmrestd_outage_without_loss_or_duplicates(
    live_portal, trainee_account, disk_target, tmpfs_target, slurm_client, settings
) -> None:
    # As the fault suite's portal: a failed submission's lease holds the run back 6 s,
    # not the production 30, for a client that gives up after 2.
    for name, value in FAULT_TIMEOUTS.items():
        setattr(settings, name, value)
    get_client.cache_clear()  # made again with that timeout (slurm_client forgets it after)
    before = start_run(trainee_account, disk_target, small_workload(), time_limit_minutes=2)
    wait_for_status(before, RunStatus.SUBMITTED, RunStatus.PENDING, RunStatus.RUNNING)

    _stop_slurmrestd()
    try:
        during = start_run(trainee_account, tmpfs_target, small_workload(), time_limit_minutes=2)
        time.sleep(3)  # the submission fails and is retried; the first job finishes
        during.refresh_from_db()
        assert during.status == RunStatus.QUEUED
    finally:
        _start_slurmrestd()

    done = follow(before, during)

    for run in done:
        assert run.status == RunStatus.COMPLETED, run.status_reason
        assert run.result.write_mib_s > 0
    jobs = get_client().jobs(trainee_account.username) or []
    for run in done:
        assert [job.job_id for job in jobs if job.name == run.job_name] == [run.slurm_job_id]


def test_a_run_whose_job_vanished_is_lost_then_found_by_its_result(
    live_portal, trainee_account, disk_target, settings
) -> None:
    run = start_run(trainee_account, disk_target, small_workload(), time_limit_minutes=2)
    run = wait_for_status(run, RunStatus.SUBMITTED, RunStatus.PENDING, RunStatus.RUNNING)
    # Pretend Slurm forgot the job: point the run at a job id it never had.
    BenchmarkRun.objects.filter(pk=run.pk).update(slurm_job_id=10**9)
    settings.LOST_AFTER_SECONDS = 0

    sync()

    run.refresh_from_db()
    assert run.status in (RunStatus.LOST, RunStatus.COMPLETED)
    # Its result still arrives from the real job, and brings it back.
    run = wait_for_status(run, RunStatus.COMPLETED)
    assert run.result.write_mib_s > 0


def _stop_slurmrestd() -> None:
    """slurmrestd alone ends and stays down (its container starts it again when it
    ends, unless held: docker/cluster/entrypoint.sh); slurmctld goes on."""
    on_controller("touch", "/run/slurmrestd.held")
    on_controller("pkill", "-TERM", "-x", "slurmrestd")
    for _ in range(50):
        if not answers():
            return
        time.sleep(0.1)
    raise AssertionError("slurmrestd still answers")


def _start_slurmrestd() -> None:
    on_controller("rm", "-f", "/run/slurmrestd.held")
    for _ in range(100):
        if answers():
            return
        time.sleep(0.1)
    raise AssertionError("slurmrestd did not start again")
