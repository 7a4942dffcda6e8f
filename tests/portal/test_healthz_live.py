"""/healthz against the live services: PostgreSQL, Redis and slurmrestd."""

import time
from collections.abc import Iterator

import pytest
from django.test import Client

from jobs.slurm import get_client
from portal import health
from tests.cluster24 import API_VERSION, CLUSTER_NAME, RELEASE

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def no_remembered_verdict(monkeypatch) -> None:
    """Each test starts with no checks remembered from an earlier one."""
    monkeypatch.setattr(health, "_last_verdict", None)


@pytest.fixture
def fresh_client() -> Iterator[None]:
    """The Slurm client is built once per process from settings; rebuild it."""
    get_client.cache_clear()
    yield
    get_client.cache_clear()


def test_it_answers_a_plain_ok_to_load_balancers(client: Client) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    assert response.content == b"ok\n"


def test_it_shows_no_details_to_non_staff(client: Client, make_user) -> None:
    client.force_login(make_user())
    assert client.get("/healthz").content == b"ok\n"


def test_it_shows_staff_what_each_part_says(client: Client, make_user) -> None:
    client.force_login(make_user(staff=True))

    page = client.get("/healthz").content.decode()

    assert "all ok" in page
    assert "PostgreSQL" in page
    assert "reachable and authenticated" in page
    # Today's Slurm: the dev cluster's release and the newest API version it serves.
    assert API_VERSION in page and f"{RELEASE}." in page
    assert CLUSTER_NAME in page  # the cluster's own name, from v0.0.40+'s ping
    # And slurmrestd's own word, where it has one (Slurm 26.05's /readyz).
    assert ("ready" if RELEASE >= "26" else "no /readyz before Slurm 26.05") in page
    assert "NOT READY" not in page


def test_it_fails_when_slurmrestd_is_unreachable(
    client: Client, make_user, settings, fresh_client
) -> None:
    settings.SLURMRESTD_URL = "http://127.0.0.1:9"  # nothing listens on the discard port
    assert client.get("/healthz").status_code == 503

    client.force_login(make_user(staff=True))
    response = client.get("/healthz")

    assert response.status_code == 503
    assert "cannot reach slurmrestd" in response.content.decode()


def test_it_fails_when_the_jwt_key_is_missing(
    client: Client, make_user, settings, fresh_client, tmp_path
) -> None:
    settings.SLURM_JWT_KEY_FILE = str(tmp_path / "no-such.key")
    client.force_login(make_user(staff=True))

    response = client.get("/healthz")

    assert response.status_code == 503
    assert "cannot read the Slurm JWT key" in response.content.decode()


def test_probes_within_a_few_seconds_share_one_round_of_checks(
    client: Client, settings, monkeypatch
) -> None:
    settings.HEALTHZ_CACHE_SECONDS = 0.5
    rounds = []
    real = health.run_checks
    monkeypatch.setattr(health, "run_checks", lambda: rounds.append(1) or real())

    answers = [client.get("/healthz").content for _ in range(20)]
    assert answers == [b"ok\n"] * 20 and len(rounds) == 1  # a load balancer's probes

    time.sleep(0.6)
    client.get("/healthz")
    assert len(rounds) == 2  # then checked again
