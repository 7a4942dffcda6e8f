"""Fixtures of the fault suite: the portal under test as real processes on the test
database with a private Redis, a trainee driving it over HTTP, and the final check
every scenario ends with (each run final, as Slurm says, one job per run).

The portal under test runs with FAULT_TIMEOUTS (services.py): it gives up on
slurmrestd after 2 s and holds a submission for 6 s."""

from collections.abc import Callable, Iterator

import httpx
import pytest
from django.conf import settings
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.contrib.auth.models import User

from jobs.models import ACTIVE_STATUSES, BenchmarkRun, RunStatus
from jobs.slurm import get_client
from tests.faults.services import (
    FAULT_TIMEOUTS,
    DelayingProxy,
    Portal,
    PrivateRedis,
    wait_until,
)

PASSWORD = "faults-Trainee-pw-1"
EXERCISE = "1a"
TARGETS = ("scratch", "tmp")
PORTAL_ENV = {
    **{name: str(value) for name, value in FAULT_TIMEOUTS.items()},
    "LOG_LEVEL": "WARNING",
}


@pytest.fixture
def private_redis(tmp_path) -> Iterator[PrivateRedis]:
    redis = PrivateRedis(tmp_path)
    redis.start()
    yield redis
    redis.stop()


@pytest.fixture
def slurmrestd_proxy() -> Iterator[DelayingProxy]:
    """A proxy in front of the dev cluster's slurmrestd that can hold answers back."""
    host, port = settings.SLURMRESTD_URL.removeprefix("http://").split(":")
    proxy = DelayingProxy((host, int(port)))
    yield proxy
    proxy.close()


@pytest.fixture
def start_portal(tmp_path, private_redis) -> Iterator[Callable[..., Portal]]:
    """Starts the portal under test on the test database and the private Redis;
    keyword arguments are environment variables of its processes."""
    started: list[Portal] = []

    def start(**env: str) -> Portal:
        db = settings.DATABASES["default"]
        base = {"DB_NAME": db["NAME"], "REDIS_URL": private_redis.url, **PORTAL_ENV}
        portal = Portal(tmp_path, base | env)
        started.append(portal)
        portal.start()
        return portal

    yield start
    for portal in started:
        portal.stop()


class TraineeBrowser:
    """A trainee's browser, as HTMX drives the lab page."""

    def __init__(self, portal: Portal, user: User | None, username: str = ""):
        self.user = user
        self.http = httpx.Client(base_url=portal.url, timeout=30)
        self.http.get("/login/")
        login = {"username": username or user.username, "password": PASSWORD}
        response = self.http.post("/login/", data=login | self._csrf())
        assert response.status_code == 302, response.text[:500]

    def _csrf(self) -> dict[str, str]:
        return {"csrfmiddlewaretoken": self.http.cookies["csrftoken"]}

    def start(self, *targets: str, exercise: str = EXERCISE) -> httpx.Response:
        headers = {"HX-Request": "true", "HX-Target": "runs-panel"}
        data = {"targets": list(targets)} | self._csrf()
        return self.http.post(f"/lab/{exercise}/runs", data=data, headers=headers)

    def panel(self, exercise: str = EXERCISE) -> str:
        """The runs panel as polled (286 once nothing is left to follow)."""
        response = self.http.get(f"/lab/{exercise}/", headers={"HX-Request": "true"})
        assert response.status_code in (200, 286), response.status_code
        return response.text


@pytest.fixture
def make_trainee_browser(
    dev_profile, make_user, make_cluster_username
) -> Callable[[Portal], TraineeBrowser]:
    """Logs a trainee (a login with a cluster account of its own, its password hashed
    with the portal's hasher: the test process hashes with MD5, which the portal does
    not take) into the given portal: a TraineeBrowser, one per call."""
    user = make_user(make_cluster_username())
    hasher = PBKDF2PasswordHasher()
    User.objects.filter(pk=user.pk).update(password=hasher.encode(PASSWORD, hasher.salt()))
    return lambda portal: TraineeBrowser(portal, user)


def runs_of(user: User) -> list[BenchmarkRun]:
    return list(BenchmarkRun.objects.filter(user=user).select_related("result", "target"))


def settled(user: User, count: int, timeout: float = 90) -> list[BenchmarkRun]:
    """The user's runs once `count` of them exist and every one is final (a completed
    one with its figures in)."""

    def check() -> list[BenchmarkRun] | None:
        runs = runs_of(user)
        done = all(
            run.status not in ACTIVE_STATUSES
            and (run.status != RunStatus.COMPLETED or hasattr(run, "result"))
            for run in runs
        )
        return runs if len(runs) == count and done else None

    try:
        return wait_until("every run final", check, timeout, interval=0.5)
    except AssertionError:
        states = [(r.target.key, r.status, r.status_reason) for r in runs_of(user)]
        raise AssertionError(f"runs not final after {timeout} s: {states}")


def assert_completed_once(runs: list[BenchmarkRun]) -> None:
    """Each run completed with its figures, and Slurm holds exactly one job of its name:
    the one the run records, completed."""
    jobs = get_client().jobs(settings.SLURM_SERVICE_USER) or []
    for run in runs:
        assert run.status == RunStatus.COMPLETED, (run.status, run.status_reason)
        assert run.result.write_bytes_per_s > 0
        mine = [job for job in jobs if job.name == run.job_name]
        assert [job.job_id for job in mine] == [run.slurm_job_id], "one Slurm job per run"
        assert mine[0].state.value == "COMPLETED"
        assert mine[0].user_name == run.cluster_username


def wait_for_reason(browser: TraineeBrowser, text: str, timeout: float = 20) -> str:
    """The runs panel, once it says `text`."""
    return wait_until(f"the panel saying {text!r}", lambda: _has(browser.panel(), text), timeout)


def _has(page: str, text: str) -> str | None:
    return page if text in page else None
