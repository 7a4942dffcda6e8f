"""(d) slurmrestd answers slower than SLURMRESTD_TIMEOUT (2 s here): a proxy holds
its answers to submissions and job lists back 4 s. The submission reaches Slurm
(the job exists) but its answer comes too late: the run must adopt that job, never
submit a second one."""

import time

import pytest

from tests.faults.conftest import (
    TARGETS,
    assert_completed_once,
    settled,
    wait_for_reason,
)

pytestmark = pytest.mark.django_db(transaction=True)


def test_runs_survive_a_slurmrestd_slower_than_the_timeout(
    start_portal, make_trainee_browser, slurmrestd_proxy
) -> None:
    portal = start_portal(SLURMRESTD_URL=slurmrestd_proxy.url)
    ada_browser = make_trainee_browser(portal)
    slurmrestd_proxy.only = (b"job/submit", b"/jobs")
    slurmrestd_proxy.delay = 4

    response = ada_browser.start(*TARGETS)

    assert response.status_code == 200
    page = wait_for_reason(ada_browser, "tries again by itself", timeout=20)
    assert "Queued" in page
    assert "no answer in time" in page
    time.sleep(4)  # slow for a while: adoption attempts time out too
    slurmrestd_proxy.delay = 0

    done = settled(ada_browser.user, len(TARGETS), timeout=60)
    assert_completed_once(done)
    assert max(run.submit_attempts for run in done) >= 2  # the late job was adopted
    assert "tries again by itself" not in ada_browser.panel()
