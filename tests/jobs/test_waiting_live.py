"""Runs beyond a course's cap, for real: a trainee in a course that allows 2 runs at
once starts 1a on two targets ×3 with one click in the lab; 2 go, 4 wait, and all
6 complete on the dev cluster in the order asked, never more than 2 going at once
in the portal or in Slurm's own queue. About 20 s."""

import time

import pytest
from django.test import Client

from exercises.catalogue.models import SiteProfile
from exercises.courses.models import Course, Enrollment
from jobs.models import ACTIVE_STATUSES, UNFINISHED_STATUSES, BenchmarkRun, RunStatus
from jobs.sync import sync
from portal.models import ClusterAccount
from tests.cluster import on_controller
from tests.runs import follow

pytestmark = pytest.mark.django_db(transaction=True)

CAP = 2


def slurm_jobs_of(username: str) -> int:
    """The user's jobs Slurm holds, pending or running (its own view, not ours)."""
    listed = on_controller(
        "squeue", "--noheader", "--user", username, "--states=PENDING,RUNNING", "--format=%i"
    )
    assert listed.returncode == 0, listed.stderr
    return len(listed.stdout.split())


def test_a_click_beyond_the_course_cap_runs_everything_in_order_within_it(
    live_portal, dev_profile: SiteProfile, trainee_account: ClusterAccount
) -> None:
    course = Course.objects.create(title="Waiting 101", profile=dev_profile, max_active_runs=CAP)
    course.exercises.set(dev_profile.exercises.filter(key="1a"))
    course.targets.set(dev_profile.targets.filter(key__in=["scratch", "tmp"]))
    Enrollment.objects.create(course=course, user=trainee_account.user)
    client = Client()
    client.force_login(trainee_account.user)

    response = client.post(
        "/lab/1a/runs", {"targets": ["scratch", "tmp"], "repeat": "3"}, follow=True
    )

    assert (
        "Started 1a on $SCRATCH, $TMPDIR; 4 more wait for a free slot and start by themselves"
        in response.content.decode()
    )
    runs = list(BenchmarkRun.objects.filter(user=trainee_account.user).order_by("created_at", "pk"))
    assert [r.target.key for r in runs] == ["scratch", "tmp"] * 3
    # The first two went (the worker may have handed one to Slurm already), four wait.
    statuses = [r.status for r in runs]
    assert all(s in ACTIVE_STATUSES for s in statuses[:2]), statuses
    assert statuses[2:] == ["waiting"] * 4, statuses

    # Follow them as beat would, looking at both sides at every step.
    most_going, most_in_slurm, samples = 0, 0, 0
    deadline = time.monotonic() + 120
    while True:
        sync()
        statuses = [BenchmarkRun.objects.get(pk=r.pk).status for r in runs]
        most_going = max(most_going, sum(s in ACTIVE_STATUSES for s in statuses))
        most_in_slurm = max(most_in_slurm, slurm_jobs_of(trainee_account.username))
        samples += 1
        # No run ever starts while an older one still waits.
        started = [s != RunStatus.WAITING for s in statuses]
        assert started == sorted(started, reverse=True), statuses
        if not any(s in UNFINISHED_STATUSES for s in statuses):
            break
        assert time.monotonic() < deadline, f"not done after 120 s: {statuses}"
        time.sleep(0.2)

    # Slurm's word that a job ended can come before its result is read (the results
    # worker parses it apart): wait for both, as a page following the run does.
    done = follow(*BenchmarkRun.objects.filter(user=trainee_account.user), timeout=30)
    assert all(r.status == RunStatus.COMPLETED for r in done), [r.status_reason for r in done]
    assert all(r.course == course and r.result.write_mib_s > 0 for r in done)
    assert most_going == CAP and 1 <= most_in_slurm <= CAP, (most_going, most_in_slurm, samples)
    # Slurm numbered the jobs in the order they were asked for (runs queued in one
    # cycle may reach it in either order).
    by_job_id = sorted(done, key=lambda r: r.slurm_job_id)
    assert all(abs(by_job_id.index(r) - i) < CAP for i, r in enumerate(runs))
