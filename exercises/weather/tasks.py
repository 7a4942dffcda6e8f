"""The weather's Celery tasks: thin, the work is in canaries.py and readings.py."""

import logging

from celery import shared_task
from django.utils import timezone

from exercises.catalogue.profiles import active
from exercises.weather import canaries, readings

log = logging.getLogger(__name__)


@shared_task(name="weather.tasks.take_readings")
def take_readings() -> None:
    """Beat, every few seconds: the readings of canaries that ended, then the canaries
    due (canaries.py: start_due). Idempotent: a reading is taken once, and canaries
    are started under one lock."""
    readings.settle()
    profile = active()
    if profile is None:
        return
    try:
        canaries.start_due(profile)
    except canaries.WeatherRefused as refused:
        log.warning("weather: no canary started: %s", refused)


@shared_task(name="weather.tasks.drop_old_readings", soft_time_limit=240, time_limit=300)
def drop_old_readings() -> None:
    """Beat, every 10 minutes: readings past WEATHER_RETENTION_DAYS go, with their runs."""
    dropped = readings.drop_old(timezone.now())
    if dropped:
        log.info("weather: dropped %s old readings", dropped)
