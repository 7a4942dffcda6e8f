"""Quota figures of the dev site's targets, stored as a collector would store them; quota
sources switched to a collector, stand-in quota tools, and a real quota worker."""

import os
import signal
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from datetime import timedelta
from pathlib import Path

from django.core.cache import cache
from django.db import connection
from django.utils import timezone

from exercises.catalogue.models import QuotaCollector, QuotaSource, SiteProfile, StorageTarget
from exercises.quotas.models import Quota, StorageScan
from exercises.quotas.store import record_usage
from exercises.quotas.tasks import COLLECT_LOCK_KEY
from exercises.quotas.usage import Usage
from jobs.results import token_hash
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


def pending_scan(account: ClusterAccount, token: str = "scan-secret") -> StorageScan:
    """A scan as `scans.start` leaves it once Slurm took its job (job 1, never asked)."""
    now = timezone.now()
    return StorageScan.objects.create(
        account=account,
        key=uuid.uuid4(),
        token_hash=token_hash(token),
        started_at=now,
        deadline=now + timedelta(minutes=30),
        slurm_job_id=1,
    )


def walk(account: ClusterAccount, key: str, *, due_now: int = 0, due_in_days: float = 0) -> dict:
    """The scanner's answer for one dev target: a `big/` directory and a `results/` one,
    and, on a purged target, `due_now` files the purge takes now and one due in
    `due_in_days` days."""
    target = dev_target(key)
    directory = target.directory_for(account.username)
    now = round(time.time())
    due = [(f"results/old{i}.dat", (i + 1) * 2**20, now - 3600) for i in range(due_now)]
    if due_in_days:
        due.append(("big/later.dat", 2**20, now + round(due_in_days * 86400)))

    def tally(days: float) -> dict:
        inside = [d for d in due if d[2] <= now + days * 86400]
        return {"files": len(inside), "bytes": sum(d[1] for d in inside)}

    found = {
        "key": key,
        "dir": directory,
        "state": "done",
        "why": "",
        "entries": 12,
        "bytes": 40 * 2**20,
        "unreadable": 0,
        "seconds": 0.02,
        "dirs": [
            {
                "path": "big",
                "bytes": 30 * 2**20,
                "files": 2,
                "children": [{"path": "big/model.bin", "bytes": 30 * 2**20, "files": 1}],
            },
            {"path": "results", "bytes": 10 * 2**20, "files": 8, "children": []},
        ],
        "purge": {
            "due": {w: tally(float(w)) for w in ("0", "1", "3", "7")},
            "files": [{"path": p, "bytes": b, "due_at": at} for p, b, at in due],
        },
    }
    if not target.purge_days:
        del found["purge"]  # the scanner looks only where the site purges
    return found
