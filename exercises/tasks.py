"""Celery tasks of the teaching domain: thin, the work is in exercises/quota/ and
exercises/calibration.py."""

import logging

from celery import shared_task
from django.conf import settings
from django.core.cache import cache

from exercises import calibration
from exercises.models import SiteProfile
from exercises.quota.collectors import collect_all

log = logging.getLogger(__name__)

COLLECT_LOCK_KEY = "exercises:quota:collect:lock"


@shared_task
def collect_quotas() -> None:
    """One collection round (beat: once as it starts, see portal/celery.py, then every
    QUOTA_INTERVAL_SECONDS). It goes to the queue QUOTA_QUEUE (CELERY_TASK_ROUTES), whose
    worker runs on a host where the filesystems are mounted; a round is bounded (see
    collectors.py), and a stuck one holds that worker only, never the runs' workers."""
    if not cache.add(COLLECT_LOCK_KEY, 1, timeout=int(settings.QUOTA_INTERVAL_SECONDS) or 60):
        log.info("quotas: skipped, another round holds the lock (it runs, or died lately)")
        return
    try:
        profile = SiteProfile.objects.filter(name=settings.SITE_PROFILE).first()
        if profile is None:
            log.warning("quotas: the site profile %r is not loaded", settings.SITE_PROFILE)
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


@shared_task
def advance_calibrations() -> None:
    """Beat, every SYNC_INTERVAL_SECONDS: each calibration round going starts its next
    runs as slots free up, or keeps its figures once its runs have ended. Idempotent:
    a round's row is held while it moves (exercises/calibration.py: advance)."""
    calibration.advance_all()
