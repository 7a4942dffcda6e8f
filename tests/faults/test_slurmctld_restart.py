"""(e) slurmctld stopped and started again, runs started while it is away. The
shared slurmctld is stopped for a few seconds only and always started again."""

import pytest

from tests.faults.conftest import (
    TARGETS,
    assert_completed_once,
    settled,
    wait_for_reason,
)
from tests.faults.services import slurmctld_stopped

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.alone("stops the cluster's slurmctld"),
]


def test_runs_started_while_slurmctld_is_down_run_once_it_is_back(
    start_portal, make_trainee_browser
) -> None:
    portal = start_portal()
    ada_browser = make_trainee_browser(portal)

    with slurmctld_stopped():
        response = ada_browser.start(*TARGETS)

        assert response.status_code == 200
        assert "Started 1a" in response.text
        page = wait_for_reason(ada_browser, "tries again by itself", timeout=10)
        assert "Queued" in page

    done = settled(ada_browser.user, len(TARGETS), timeout=60)
    assert_completed_once(done)
    assert "tries again by itself" not in ada_browser.panel()
