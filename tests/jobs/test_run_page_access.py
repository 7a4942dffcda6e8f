"""A run's page is its owner's and staff's (jobs/access.py); another trainee is told
there is no run of theirs at that address."""

import pytest
from django.test import Client

from jobs.models import BenchmarkRun

pytestmark = pytest.mark.django_db


def test_the_owner_sees_their_run(client: Client, run: BenchmarkRun) -> None:
    client.force_login(run.user)
    assert client.get(f"/jobs/runs/{run.key}/").status_code == 200


def test_staff_see_any_run(client: Client, run: BenchmarkRun, make_user) -> None:
    client.force_login(make_user(staff=True))
    assert client.get(f"/jobs/runs/{run.key}/").status_code == 200


def test_another_trainee_is_told_it_is_not_theirs(
    client: Client, run: BenchmarkRun, make_user
) -> None:
    client.force_login(make_user())

    response = client.get(f"/jobs/runs/{run.key}/")

    assert response.status_code == 404
    assert "No run of yours has this address" in response.content.decode()
