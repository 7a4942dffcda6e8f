"""The queries made every few seconds never read a run's output (up to
RESULT_MAX_BYTES each): the sync cycle, the runs panel and the run page a trainee's
browser polls, the calibration's step."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from jobs import sync
from jobs.models import BenchmarkRun, RunStatus
from tests.runs import make_run

pytestmark = pytest.mark.django_db

OUTPUT = "x" * 100_000


def selects_output(queries: CaptureQueriesContext) -> list[str]:
    return [q["sql"] for q in queries.captured_queries if '"raw_output"' in q["sql"]]


@pytest.fixture
def running(make_user, dev_profile) -> BenchmarkRun:
    """A run whose job still runs, its output already in (the job posts it first)."""
    user = make_user("sl-trainee8")
    exercise = dev_profile.exercises.get(key="1a")
    return make_run(
        user.cluster_account,
        dev_profile.targets.get(key="scratch"),
        exercise=exercise,
        status=RunStatus.RUNNING,
        slurm_job_id=424242,
        submitted_at=timezone.now(),
        raw_output=OUTPUT,
        result_received_at=timezone.now(),
    )


class NothingChanged:
    def jobs(self, user: str, since=None) -> None:
        return None


def test_the_sync_cycle_does_not_read_outputs(running, monkeypatch) -> None:
    monkeypatch.setattr(sync, "get_client", NothingChanged)

    with CaptureQueriesContext(connection) as queries:
        assert sync.follow_runs() == 1

    assert selects_output(queries) == []


def test_the_polled_run_page_and_runs_panel_do_not_read_outputs(client, running) -> None:
    client.force_login(running.user)
    htmx = {"HX-Request": "true"}

    with CaptureQueriesContext(connection) as queries:
        assert client.get(f"/jobs/runs/{running.key}/", headers=htmx).status_code == 200
        panel = client.get("/lab/1a/", headers=htmx | {"HX-Target": "runs-panel"})
        assert panel.status_code == 200

    assert selects_output(queries) == []


def test_the_output_page_still_gives_the_whole_output(client, running) -> None:
    client.force_login(running.user)

    response = client.get(f"/jobs/runs/{running.key}/output")

    assert response.content.decode() == OUTPUT
