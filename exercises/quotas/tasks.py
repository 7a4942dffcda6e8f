"""The quota round's Celery task (thin, the work is in collectors.py) and the history's
thinning (history.py). The round keeps the name it had before the split (the beat
schedule and queued messages use it)."""

import logging

from celery import shared_task
from django.conf import settings
from django.core.cache import cache

from exercises.catalogue import profiles
from exercises.quotas import history
from exercises.quotas.collectors import collect_all

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
