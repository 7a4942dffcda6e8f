"""The quota round's Celery task (thin, the work is in collectors.py), the history's
thinning (history.py), and the storage scans' and purges' rounds (scans.py). The quota
round keeps the name it had before the split (the beat schedule and queued messages
use it)."""

import logging

from celery import shared_task
from django.conf import settings
from django.core.cache import cache

from exercises.catalogue import profiles
from exercises.quotas import history, notices, scans
from exercises.quotas.collectors import collect_all
from exercises.quotas.models import StorageScan

log = logging.getLogger(__name__)

COLLECT_LOCK_KEY = "exercises:quota:collect:lock"


@shared_task(name="exercises.tasks.collect_quotas")
def collect_quotas() -> None:
    """One collection round (beat: once as it starts, see portal/celery.py, then every
    QUOTA_INTERVAL_SECONDS). It goes to the queue QUOTA_QUEUE (CELERY_TASK_ROUTES), whose
    worker runs on a host where the filesystems are mounted; a round is bounded (see
    collectors.py), and a stuck one holds that worker only, never the runs' workers."""
    if not cache.add(COLLECT_LOCK_KEY, 1, timeout=int(settings.QUOTA_INTERVAL_SECONDS) or 60):
        log.info("quotas: skipped, another round holds the lock (it runs, or died lately)")
        return
    try:
        profile = profiles.active()
        if profile is None:
            log.warning("quotas: %s", profiles.not_loaded())
            return
        summary = collect_all(profile)
        log.info(
            "quotas: %d collected, %d unknown in %.1f s",
            summary.collected,
            summary.failed,
            summary.seconds,
        )
        for note in summary.notes:
            log.warning("quotas: %s", note)
    finally:
        cache.delete(COLLECT_LOCK_KEY)


@shared_task(name="quotas.tasks.thin_usage_history")
def thin_usage_history() -> None:
    """Beat, hourly: the usage history thinned with age (history.py)."""
    dropped = history.thin()
    if dropped:
        log.info("quotas: %d usage samples thinned or past their days", dropped)


@shared_task(name="quotas.tasks.follow_scans")
def follow_scans() -> None:
    """Beat, every minute: a scan or purge whose job ended without an answer ends failed."""
    for scan in StorageScan.objects.filter(status=StorageScan.Status.SUBMITTED).select_related(
        "account"
    ):
        scans.follow(scan)


@shared_task(name="quotas.tasks.scan_storage")
def scan_storage() -> None:
    """Beat, hourly: the active users' storage scanned every SCAN_INTERVAL_HOURS."""
    started = scans.start_due(StorageScan.Kind.SCAN)
    if started:
        log.info("quotas: %d storage scan(s) started", started)


@shared_task(name="quotas.tasks.purge_storage")
def purge_storage() -> None:
    """Beat, hourly: where the portal purges (PURGE_TARGETS), each account's purge job
    every PURGE_INTERVAL_HOURS."""
    started = scans.start_due(StorageScan.Kind.PURGE)
    if started:
        log.info("quotas: %d purge job(s) started", started)


@shared_task(name="quotas.tasks.send_storage_notices")
def send_storage_notices() -> None:
    """Beat, hourly: e-mail each user whose storage crossed a line (notices.py)."""
    mailed = notices.check_everyone()
    if mailed:
        log.info("quotas: %d storage notice(s) mailed", mailed)
