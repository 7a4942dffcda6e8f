"""(a) Redis, the broker and the cache, stops while a trainee starts runs.

Decided: the runs are saved and wait as queued, saying why, and go to the cluster by
themselves once Redis is back (the sync hands queued runs whose task never left a
new one). The trainee is told so at once; nothing is left that nothing will move."""

import pytest

from jobs.models import RunStatus
from tests.faults.conftest import TARGETS, assert_completed_once, runs_of, settled

pytestmark = pytest.mark.django_db(transaction=True)


def test_runs_started_while_redis_is_down_wait_then_run(
    start_portal, private_redis, make_trainee_browser
) -> None:
    portal = start_portal()
    ada_browser = make_trainee_browser(portal)

    private_redis.stop()
    try:
        response = ada_browser.start(*TARGETS)

        assert response.status_code == 200, response.text[:2000]
        assert "task queue is not answering" in response.text
        assert "go to the cluster by themselves" in response.text
        runs = runs_of(ada_browser.user)
        assert sorted(r.target.key for r in runs) == sorted(TARGETS)
        assert {r.status for r in runs} == {RunStatus.QUEUED}
        assert "goes to the cluster by itself" in ada_browser.panel()
    finally:
        private_redis.start()

    done = settled(ada_browser.user, len(TARGETS), timeout=60)
    assert_completed_once(done)
    page = ada_browser.panel()
    assert page.count("Completed") == len(TARGETS)
    assert "by itself" not in page
