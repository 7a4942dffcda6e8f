import pytest
from django.test import Client

from jobs.models import BenchmarkRun, RunStatus

pytestmark = pytest.mark.django_db


def test_the_owner_cancels_a_queued_run(client: Client, run: BenchmarkRun) -> None:
    client.force_login(run.user)

    response = client.post(f"/jobs/runs/{run.key}/cancel", follow=True)

    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED
    assert "being cancelled" in response.content.decode()


def test_another_user_cannot_cancel_it(client: Client, run: BenchmarkRun, make_user) -> None:
    client.force_login(make_user())

    assert client.post(f"/jobs/runs/{run.key}/cancel").status_code == 404
    run.refresh_from_db()
    assert run.status == RunStatus.QUEUED


def test_anonymous_users_are_sent_to_log_in(client: Client, run: BenchmarkRun) -> None:
    response = client.post(f"/jobs/runs/{run.key}/cancel")
    assert response.status_code == 302
    assert "/login/" in response["Location"]


def test_cancel_needs_a_post(client: Client, run: BenchmarkRun) -> None:
    client.force_login(run.user)
    assert client.get(f"/jobs/runs/{run.key}/cancel").status_code == 405
