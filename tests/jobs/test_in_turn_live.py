"""A user's runs go to Slurm one at a time (jobs/submission.py: _in_turn), on the
live dev cluster: a run handed to Slurm while another of the account's is there
starts once that one has ended; a job Slurm has forgotten holds
nothing back; and another account's runs are not held back by them."""

import pytest

from jobs.handover import submit
from jobs.models import RunStatus
from jobs.slurm import get_client
from tests.runs import follow, make_run

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_second_run_of_an_account_starts_once_the_first_has_ended(
    sync_loop, trainee_account, disk_target, tmpfs_target
) -> None:
    first = make_run(trainee_account, disk_target)
    second = make_run(trainee_account, tmpfs_target)

    submit(first.pk)
    submit(second.pk)

    second.refresh_from_db()
    assert get_client().job(trainee_account.username, second.slurm_job_id).reason == "Dependency"
    first, second = follow(first, second)
    assert first.status == second.status == RunStatus.COMPLETED
    assert second.started_at >= first.ended_at


def test_a_job_slurm_has_forgotten_holds_nothing_back(
    sync_loop, trainee_account, disk_target
) -> None:
    # The portal still counts a run as running whose job Slurm no longer knows (its
    # record went MinJobAge after it ended, while the sync was away).
    make_run(trainee_account, disk_target, status=RunStatus.RUNNING, slurm_job_id=2_000_000_000)
    run = make_run(trainee_account, disk_target)

    submit(run.pk)

    (run,) = follow(run)
    assert run.status == RunStatus.COMPLETED, run.status_reason


def test_another_accounts_run_is_not_held_back(
    sync_loop, trainee_account, make_cluster_username, make_user, disk_target
) -> None:
    other = make_user(make_cluster_username()).cluster_account
    mine = make_run(trainee_account, disk_target, time_limit_minutes=2)
    theirs = make_run(other, disk_target)
    submit(mine.pk)
    submit(theirs.pk)

    theirs.refresh_from_db()
    job = get_client().job(other.username, theirs.slurm_job_id)
    assert job.reason != "Dependency"
