"""Fixtures shared by every test.

Tests share one dev cluster: each test that touches it gets cluster accounts,
job names and directories of its own, so order and leftovers never matter.

Markers: `live` tests need the dev cluster (Slurm, slurmrestd, Redis, Celery, real
Unix accounts), `e2e` tests drive Chromium. `make test` runs them all; the inner
loop `pytest -m "not live and not e2e"` needs only PostgreSQL, so the other tests
keep the cache (rate limits, the site's rows) in memory instead of in Redis.

`alone` tests measure the cluster, hold all of it or stop a part everyone shares
(`pytest.mark.alone("why")` on the test or its module): `make test` runs the others in
parallel (pytest-xdist, `-n`), each worker with a test database and a Redis
database of its own, and then these one after another (docker/dev/test.sh).
"""

import contextlib
import fcntl
import os
import re
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.contrib.auth.models import User

from portal.models import ClusterAccount
from tests.names import unique_name

# Fixtures every test may use, each from the module made for it: the runs and the
# live cluster (a Celery worker, the live portal, the sync loop, the dev profile:
# session-scoped ones start once per session), and single sign-on (a real OpenID
# provider in a process of its own), and the multi-node cluster of Slurm 24.11.
pytest_plugins = ["tests.runs", "tests.sso", "tests.cluster24"]

# Playwright's sync API and the live server share the test process.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

ROOT = Path(__file__).resolve().parent.parent
ACCOUNT_SCRIPT = ROOT / "docker" / "slurm" / "account.sh"
# The same account on the cluster's nodes (its jobs run as the user there).
NODES_ACCOUNT_SCRIPT = ROOT / "docker" / "cluster" / "account.sh"
DISK_ROOT = Path(os.getenv("STORAGELAB_DISK_ROOT", "/srv/storagelab"))


@pytest.fixture
def make_cluster_username() -> Iterator[Callable[[], str]]:
    """Creates real Unix accounts (with their target directories) for one test; each
    call returns the new account's user name (a string, not a ClusterAccount)."""
    created: list[str] = []

    def make() -> str:
        name = unique_name("slt")
        subprocess.run([str(ACCOUNT_SCRIPT), "add", name], check=True)
        subprocess.run([str(NODES_ACCOUNT_SCRIPT), name], check=True, timeout=60)
        created.append(name)
        return name

    yield make
    for name in created:
        subprocess.run([str(ACCOUNT_SCRIPT), "remove", name], check=False)


@pytest.fixture
def cluster_username(make_cluster_username: Callable[[], str]) -> str:
    """The user name of a real Unix account of this test's own."""
    return make_cluster_username()


@pytest.fixture
def scratch_dir(cluster_username: str) -> Path:
    """The account's own directory on the dev $SCRATCH-like disk target."""
    return DISK_ROOT / "scratch" / cluster_username


@pytest.fixture
def make_user(db: None) -> Callable[..., User]:
    def make(
        cluster_username: str | None = None,
        *,
        staff: bool = False,
        superuser: bool = False,
        password: str = "pw-Test-1",
    ) -> User:
        user = User.objects.create_user(
            unique_name("user"),
            password=password,
            is_staff=staff or superuser,
            is_superuser=superuser,
            first_name="Ada",
        )
        if cluster_username:
            ClusterAccount.objects.create(user=user, username=cluster_username)
        return user

    return make


@pytest.fixture
def ada(dev_profile, make_user) -> User:
    """Ada, the trainee of a test: a portal login with a cluster account of her own,
    sl-ada, on the dev site. `ada` is always this login; her account is `ada_account`."""
    return make_user("sl-ada")


@pytest.fixture
def ada_account(ada) -> ClusterAccount:
    return ada.cluster_account


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict) -> dict:
    # Debian's Chromium; Playwright cannot download its own browser here.
    return {
        **browser_type_launch_args,
        "executable_path": os.getenv("CHROMIUM", "/usr/bin/chromium"),
        "args": ["--disable-gpu", "--no-sandbox", "--disable-background-networking"],
    }


# Fixtures that reach the dev cluster: a test using one is live.
LIVE_FIXTURES = {
    "make_cluster_username", "celery_worker_thread", "live_portal", "sync_loop_only",
    "slurm_client", "cluster24",
}  # fmt: skip
# Folders whose every test stops, starts or builds real parts.
LIVE_FOLDERS = {"faults", "deploy"}


# Held for the session: the test database this session owns (see pytest_configure).
_DATABASE_LOCK: list[object] = []


def pytest_configure(config: pytest.Config) -> None:
    """Two sessions at once on one machine (a `make test` and a `make quick` beside it)
    each get a test database of their own: the first free of test_storagelab,
    test_storagelab_2, ... (a lock file per name, released when its session ends),
    unless DB_TEST_NAME names one. Else the second session would drop the first's.
    The workers of a parallel session take the name their session holds (pytest-django
    adds _gw0, _gw1...) and a Redis database each."""
    from django.conf import settings

    test = settings.DATABASES["default"].setdefault("TEST", {})
    worker_input = getattr(config, "workerinput", None)
    if worker_input is not None:
        if worker_input.get("test_database"):
            test["NAME"] = worker_input["test_database"]
        _redis_of_its_own(settings, int(worker_input["workerid"].removeprefix("gw")))
        _empty_redis(settings.REDIS_URL)
        return
    _empty_redis(settings.REDIS_URL)
    if os.getenv("DB_TEST_NAME"):
        return
    base = test.get("NAME") or "test_storagelab"
    locks = Path(os.getenv("RUN_DIR", "/run/storagelab"))
    if not locks.is_dir():
        locks = Path("/tmp")
    for n in range(1, 33):
        name = base if n == 1 else f"{base}_{n}"
        handle = (locks / f"pytest-{name}.lock").open("w")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            continue
        _DATABASE_LOCK.append(handle)
        test["NAME"] = name
        return


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    """(pytest-xdist) The database name this session holds, to each of its workers."""
    from django.conf import settings

    node.workerinput["test_database"] = settings.DATABASES["default"].get("TEST", {}).get("NAME")


def _redis_of_its_own(settings, worker: int) -> None:
    """Worker N of a parallel session uses the Redis database N after the session's:
    the Celery worker in each would otherwise take the others' tasks (runs that are
    not in its test database) and their caches would mix (ids repeat across them)."""
    from portal.celery import app

    def shifted(url: str) -> str:
        # redis://host:port[/N][/]: database N (0 if none) + 1 + the worker's number.
        address, number = re.fullmatch(r"(.*?)(?:/(\d+))?/?", url).groups()
        return f"{address}/{int(number or 0) + 1 + worker}"

    settings.REDIS_URL = shifted(settings.REDIS_URL)
    settings.CELERY_BROKER_URL = settings.REDIS_URL
    settings.CACHES["default"]["LOCATION"] = settings.REDIS_URL
    app.conf.broker_url = settings.REDIS_URL
    # Processes the tests start (manage.py commands, a portal of their own) too.
    os.environ["REDIS_URL"] = shifted(os.getenv("REDIS_URL", "redis://127.0.0.1:6379/0"))


def _empty_redis(url: str) -> None:
    """A session's Redis database starts empty: its keys name users by id, and ids
    repeat with each test database, so a bench's thousand Darshan logs an hour would
    otherwise be counted against the next session's users. Never database 0, the
    dev portal's own; nothing to do where Redis is not running (the inner loop)."""
    import redis

    database = re.search(r"/(\d+)/?$", url)
    if not database or int(database[1]) == 0:
        return
    with contextlib.suppress(redis.exceptions.ConnectionError):
        redis.Redis.from_url(url, socket_connect_timeout=1).flushdb()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The one place the markers are set: `e2e` for the browser's tests (tests/e2e/),
    `live` for every test that needs the dev cluster: in a file named *_live.py, in
    tests/faults/ or tests/deploy/, or using a fixture that reaches the cluster."""
    for item in items:
        if "e2e" in item.path.parts:
            item.add_marker(pytest.mark.e2e)
        if (
            item.path.stem.endswith("_live")
            or LIVE_FOLDERS & set(item.path.parts)
            or LIVE_FIXTURES & set(getattr(item, "fixturenames", ()))
        ):
            item.add_marker(pytest.mark.live)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Each failure as it happens, to the file FAILURE_LOG names (if set): a suite of
    half an hour says why a test failed at its minute, not only at its end."""
    log = os.getenv("FAILURE_LOG")
    # A parallel session's workers pass their reports to it: it writes them, once.
    if log and report.failed and not os.getenv("PYTEST_XDIST_WORKER"):
        with open(log, "a") as out:
            out.write(f"=== {report.nodeid} ({report.when})\n{report.longreprtext}\n\n")


@pytest.fixture(autouse=True)
def cache_in_memory_unless_live(request, settings) -> None:
    if not (request.node.get_closest_marker("live") or request.node.get_closest_marker("e2e")):
        settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}


@pytest.fixture(autouse=True)
def fast_password_hashing(settings) -> None:
    # Real hashing costs ~0.2 s a user; tests make many users and test no hashing.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
