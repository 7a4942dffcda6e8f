"""Quota figures of the dev site's targets, stored as a collector would store them; quota
sources switched to a collector, stand-in quota tools, and a real quota worker."""

import os
import signal
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from django.core.cache import cache
from django.db import connection

from exercises.catalogue.models import QuotaCollector, QuotaSource, SiteProfile, StorageTarget
from exercises.quotas.models import Quota
from exercises.quotas.store import record_usage
from exercises.quotas.tasks import COLLECT_LOCK_KEY
from exercises.quotas.usage import Usage
from portal.celery import app
from portal.models import ClusterAccount
from tests.conftest import ROOT
from tests.names import unique_name

QUEUE = "quotas"  # as up.sh names it (settings.QUOTA_QUEUE)
# What `lfs quota -q -u USER /lustre/scratch` prints: 1 GiB used, 1200 files.
LFS_OUTPUT = "/lustre/scratch 1048576 4194304 5242880 - 1200 100000 120000 -"


def dev_target(key: str) -> StorageTarget:
    return StorageTarget.objects.get(profile__name="dev", key=key)


def fill(account: ClusterAccount, key: str, used: int, **limits: int) -> None:
    """The account's figures on a dev target, as the local collector stores them."""
    record_usage(account, dev_target(key), "local", Usage(bytes_used=used, **limits))


def source(
    profile: SiteProfile, key: str, collector: str = QuotaCollector.LOCAL, fs: str = ""
) -> QuotaSource:
    quota_source = profile.targets.get(key=key).quota_source
    quota_source.collector, quota_source.filesystem = collector, fs
    quota_source.save()
    return quota_source


def quota_of(account: ClusterAccount, key: str) -> Quota:
    return Quota.objects.get(account=account, target__key=key)


def stand_in_tools(bin_dir: Path, settings) -> Callable[[str, str], Path]:
    """Puts stand-in quota tools (shell scripts) first on the collectors' PATH."""
    bin_dir.mkdir()
    settings.QUOTA_TOOL_PATH = f"{bin_dir}:/usr/bin:/bin"

    def install(name: str, body: str) -> Path:
        tool = bin_dir / name
        tool.write_text(f"#!/bin/sh\n{body}\n")
        tool.chmod(0o755)
        return tool

    return install


@contextmanager
def quota_worker(log: Path, **env: str) -> Iterator[subprocess.Popen]:
    """A real Celery worker on the quotas queue, started as up.sh starts it, on the
    tests' database and Redis, with `env` on top (it cannot see pytest's settings)."""
    cache.delete(COLLECT_LOCK_KEY)  # a round killed by an earlier test never released it
    with app.connection_for_write() as broker:  # rounds an earlier test left unconsumed
        broker.default_channel.queue_purge(QUEUE)
    argv = [ROOT / ".venv/bin/celery", "-A", "portal", "worker", "--queues", QUEUE]
    argv += ["--concurrency", "1", "--hostname", f"{unique_name('quotas')}@%h", "-l", "INFO"]
    with log.open("ab") as out:
        worker = subprocess.Popen(
            [*argv, "--without-heartbeat", "--without-gossip", "--without-mingle"],
            cwd=ROOT,
            env=os.environ | {"DB_NAME": connection.settings_dict["NAME"]} | env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        yield worker
    finally:
        with suppress(ProcessLookupError):
            os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(timeout=30)
        cache.delete(COLLECT_LOCK_KEY)
