"""The calibration's Celery task: thin, the work is in rounds.py. It keeps the name it
had before the split (the beat schedule and queued messages use it)."""

from celery import shared_task

from exercises.calibration import rounds


@shared_task(name="exercises.tasks.advance_calibrations")
def advance_calibrations() -> None:
    """Beat, every SYNC_INTERVAL_SECONDS: each calibration round going starts its next
    runs as slots free up, or keeps its figures once its runs have ended. Idempotent:
    a round's row is held while it moves (rounds.py: advance)."""
    rounds.advance_all()
