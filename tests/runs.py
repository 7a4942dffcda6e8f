"""Fixtures and helpers for runs on the live dev cluster: a real Celery worker on
the test database, the live server for the jobs' result posts, a sync loop standing
in for Celery beat, targets, trainees and the dev site profile. Conftests that need
them import them all."""

import io
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

import pytest
from celery import Task
from celery.contrib.testing.worker import start_worker
from celery.signals import task_postrun
from django.conf import settings
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from exercises.catalogue.models import SiteProfile, StorageTarget
from jobio.models import RunLog
from jobs.engines.base import KiB, MiB, Pattern, Workload
from jobs.models import UNFINISHED_STATUSES, BenchmarkRun, RunResult, RunStatus
from jobs.slurm import SlurmClient, get_client
from jobs.sync import sync
from portal.celery import app
from portal.models import ClusterAccount
from tests.names import unique_name


@pytest.fixture(scope="session")
def celery_worker_thread(django_db_setup, django_db_blocker) -> Iterator[None]:
    # Workers keep their database connection between tasks (portal/celery.py). This
    # one runs its tasks in a thread of the test process, whose connection nothing
    # would close once the thread ends, and the test database could not be dropped:
    # it closes it after every task instead.
    task_postrun.connect(close_worker_connection)
    try:
        with (
            django_db_blocker.unblock(),
            start_worker(
                app,
                # The runs' queue, the results' and the Darshan logs' (each a worker of
                # its own in production).
                queues=["celery", settings.RESULTS_QUEUE, settings.DARSHAN_QUEUE],
                perform_ping_check=False,
                loglevel="WARNING",
                shutdown_timeout=60,
            ),
        ):
            yield
    finally:
        task_postrun.disconnect(close_worker_connection)


def close_worker_connection(sender: Task, **kwargs: object) -> None:
    if not getattr(sender.request, "is_eager", False):
        connection.close()


@pytest.fixture
def live_portal(live_server, portal_for_nodes, settings, celery_worker_thread) -> str:
    """The live portal (its URL on this host), and as jobs see it: they post their
    results from the cluster's nodes to a second live server they reach."""
    settings.PORTAL_CALLBACK_URL = portal_for_nodes
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, urlsplit(portal_for_nodes).hostname]
    return live_server.url


# How often a test asks Slurm where its runs are: twice as often as a site's beat
# (SYNC_INTERVAL_SECONDS, 2 s), no more. Each cycle is one `GET jobs`, which slurmrestd
# answers with every job the controller still holds (five minutes of the suite's) as
# soon as any job changed, as one nearly always has with three workers' tests going;
# polling every 0.3-0.5 s made slurmrestd the busiest process of the cluster (126 CPU
# seconds of a 12-minute `make test`, 1,941 `GET jobs`).
POLL_SECONDS = 1.0


@contextmanager
def syncing(interval: float = POLL_SECONDS) -> Iterator[None]:
    """What Celery beat does in production: a sync cycle every `interval` seconds."""
    stop = threading.Event()

    def loop() -> None:
        try:
            while not stop.wait(interval):
                sync()
        finally:
            connection.close()

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    yield
    stop.set()
    thread.join(timeout=10)


@pytest.fixture
def sync_loop(live_portal) -> Iterator[None]:
    with syncing():
        yield


@pytest.fixture
def sync_loop_only(db) -> Iterator[None]:
    """The sync cycle alone, for a portal whose other parts run elsewhere."""
    with syncing(interval=2):
        yield


def use_site_profile(name: str, settings) -> SiteProfile:
    """Loads the shipped profile `name` (exercises/catalogue/sites/) and makes it the site's."""
    call_command("load_site_profile", name, stdout=io.StringIO())
    settings.SITE_PROFILE = name
    return SiteProfile.objects.get(name=name)


@pytest.fixture
def dev_profile(db, settings) -> SiteProfile:
    """The dev site's profile, as `make demo` loads it."""
    return use_site_profile("dev", settings)


@pytest.fixture
def site(db) -> SiteProfile:
    return SiteProfile.objects.create(name=unique_name("site"), title="Test site")


@pytest.fixture
def disk_target(site) -> StorageTarget:
    return StorageTarget.objects.create(
        profile=site,
        key=unique_name("scratch"),
        name="$SCRATCH",
        filesystem="ext4",
        path_template="/srv/storagelab/scratch/{user}",
    )


@pytest.fixture
def tmpfs_target(site) -> StorageTarget:
    return StorageTarget.objects.create(
        profile=site,
        key=unique_name("tmp"),
        name="$TMPDIR",
        filesystem="tmpfs",
        path_template="/dev/shm/storagelab/{user}",
        in_memory=True,
    )


@pytest.fixture
def trainee_account(cluster_username: str, make_user: Callable[..., User]) -> ClusterAccount:
    """A trainee's cluster account: a real Unix account of its own, and its login."""
    return make_user(cluster_username).cluster_account


def small_workload(pattern: Pattern = Pattern.SEQUENTIAL, processes: int = 1) -> Workload:
    block = 4 * KiB if pattern == Pattern.RANDOM else 1 * MiB
    return Workload(
        pattern=pattern, block_size=block, processes=processes, size_per_process=4 * MiB
    )


def make_run(account: ClusterAccount, target: StorageTarget, **fields) -> BenchmarkRun:
    """A run saved as start_run would, without enqueueing its submission."""
    defaults = {
        "user": account.user,
        "cluster_username": account.username,
        "target": target,
        "target_directory": target.directory_for(account.username),
        "in_memory": target.in_memory,
        "workload": small_workload().model_dump(mode="json"),
        "time_limit_minutes": 2,
        "result_token_hash": "x",
    }
    return BenchmarkRun.objects.create(**(defaults | fields))


def follow(*runs: BenchmarkRun, timeout: float = 180) -> list[BenchmarkRun]:
    """Runs the sync cycle (as beat would) until every run has ended and each
    completed one has its result (or a parse error) in. The timeout leaves room for
    the other tests' jobs (make test runs several tests at once on the one cluster)."""
    deadline = time.monotonic() + timeout
    while True:
        sync()
        fresh = [BenchmarkRun.objects.select_related("result").get(pk=r.pk) for r in runs]
        if all(_settled(run) for run in fresh):
            return fresh
        if time.monotonic() > deadline:
            states = ", ".join(f"{r.pk}:{r.status}" for r in fresh)
            raise AssertionError(f"runs not settled after {timeout}s: {states}")
        time.sleep(POLL_SECONDS)


def _settled(run: BenchmarkRun) -> bool:
    if run.status in UNFINISHED_STATUSES:
        return False
    if run.status == "completed":
        return hasattr(run, "result") or bool(run.parse_error)
    return True


def make_runs(
    account: ClusterAccount,
    profile: SiteProfile,
    count: int,
    status=RunStatus.COMPLETED,
    keys: list[str] | None = None,
) -> None:
    """`count` runs of the account's of exercise 1a, over the profile's targets (or those
    of `keys`) in turn, each with a figure: 100, 101, 102... MiB/s."""
    exercise = profile.exercises.get(key="1a")
    targets = list(profile.targets.filter(key__in=keys) if keys else profile.targets.all())
    runs = BenchmarkRun.objects.bulk_create(
        BenchmarkRun(
            user=account.user,
            cluster_username=account.username,
            target=targets[i % len(targets)],
            exercise=exercise,
            target_directory="/x",
            workload=exercise.workload.model_dump(mode="json"),
            time_limit_minutes=2,
            result_token_hash="x",
            status=status,
            result_received_at=timezone.now(),
        )
        for i in range(count)
    )
    RunResult.objects.bulk_create(
        RunResult(run=run, engine="fio", processes=1, write_bytes_per_s=(100 + i) * 2**20)
        for i, run in enumerate(runs)
    )


@pytest.fixture
def slurm_client() -> Iterator[SlurmClient]:
    """The portal's client of the dev cluster's slurmrestd, made afresh (it finds the
    API version again), and forgotten after the test."""
    get_client.cache_clear()
    yield get_client()
    get_client.cache_clear()


def run_log_of(run: BenchmarkRun, timeout: float = 60) -> RunLog:
    """The run's Darshan logs once read (the job sends them right after its result)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        row = RunLog.objects.filter(run=run).first()
        if row and (row.io or row.problem or row.missing):
            return row
        time.sleep(0.3)
    raise AssertionError(f"no Darshan logs read for run {run.pk} after {timeout}s")
