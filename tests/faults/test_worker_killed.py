"""(c) The Celery worker is killed (-9, with its pool) while a submission is in
flight: slurmrestd took the job, the worker died before it heard the job id. The
run must adopt that job once a worker is back, not submit a second one."""

import pytest

from tests.faults.conftest import TARGETS, assert_completed_once, settled

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_worker_killed_mid_submission_leaves_one_job_per_run(
    start_portal, make_trainee_browser, slurmrestd_proxy
) -> None:
    portal = start_portal(SLURMRESTD_URL=slurmrestd_proxy.url)
    ada_browser = make_trainee_browser(portal)
    slurmrestd_proxy.only = (b"job/submit",)
    slurmrestd_proxy.delay = 5  # the answer to the submission is held: the job exists meanwhile

    response = ada_browser.start(*TARGETS)
    assert response.status_code == 200
    assert slurmrestd_proxy.requested.wait(timeout=30), "no submission reached slurmrestd"
    portal.kill_worker()
    slurmrestd_proxy.delay = 0
    portal.start_worker()

    done = settled(ada_browser.user, len(TARGETS), timeout=60)
    assert_completed_once(done)
    assert max(run.submit_attempts for run in done) >= 2  # one was taken over
    assert ada_browser.panel().count("Completed") == len(TARGETS)
