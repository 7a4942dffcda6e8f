"""Readings: a canary's figure, taken once its run has ended and its output is in (the
result came the way every run's does: jobs/results.py), and kept WEATHER_RETENTION_DAYS.

A reading taken while trainees' runs were going on its target (other people's runs,
not a calibration's, whose time overlapped the canary's: jobs/company.py) is kept and marked
`during_class`: the weather a class makes is weather too, and pages say so."""

from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Q

from exercises.catalogue.models import RESULT_FIELD
from exercises.weather.canaries import METRIC
from exercises.weather.models import Reading
from jobs.company import annotated, company
from jobs.models import UNFINISHED_STATUSES, BenchmarkRun, RunStatus

# Readings (and their runs) dropped per DELETE: a round of retention is short.
BATCH = 500
ROUND_BATCHES = 20


def settle() -> list[Reading]:
    """Takes the figure of every pending reading whose run has ended and whose output
    is in, or says why there is none. Idempotent. Returns the readings settled."""
    pending = (
        Reading.objects.filter(figure__isnull=True, problem="")
        .exclude(run__status__in=UNFINISHED_STATUSES)
        .select_related("run", "run__result")
        .defer("run__raw_output", "run__job_script")
    )
    settled = []
    for reading in pending:
        if _take(reading):
            settled.append(reading)
    return settled


def _take(reading: Reading) -> bool:
    run = reading.run
    result = getattr(run, "result", None)
    if run.status == RunStatus.COMPLETED and result is None:
        if run.parse_error:
            reading.problem = f"its output could not be read: {run.parse_error}"
        elif run.result_missing:
            reading.problem = "its output never reached the portal"
        else:
            return False  # the output is on its way
    elif result is not None and run.status == RunStatus.COMPLETED:
        reading.figure = result.figure(RESULT_FIELD[METRIC[reading.kind]])
        if reading.figure is None:
            reading.problem = "its output gave no figure that can be true"
    else:
        reading.problem = run.status_reason or run.get_status_display()
    reading.taken_at = run.started_at or reading.taken_at
    reading.during_class = _during_class(run)
    reading.save(update_fields=["figure", "problem", "taken_at", "during_class"])
    return True


def _during_class(run: BenchmarkRun) -> bool:
    """Other people's runs (not a calibration's) shared the canary's target while it
    ran, by the rule every run page uses (jobs/company.py) (1 query)."""
    found = company(annotated(BenchmarkRun.objects.filter(pk=run.pk)).first())
    return found is not None and found.others > 0


def drop_old(now: datetime) -> int:
    """Drops the settled readings older than WEATHER_RETENTION_DAYS, with their canary
    runs (the weather's own; their figure is the reading), at most BATCH at a time.
    Idempotent. Returns how many."""
    if not settings.WEATHER_RETENTION_DAYS:
        return 0
    cutoff = now - timedelta(days=settings.WEATHER_RETENTION_DAYS)
    old = Reading.objects.filter(taken_at__lt=cutoff).filter(
        Q(figure__isnull=False) | ~Q(problem="")
    )
    dropped = 0
    for _ in range(ROUND_BATCHES):
        run_ids = list(old.values_list("run_id", flat=True)[:BATCH])
        if not run_ids:
            break
        # A reading goes with its run (on_delete CASCADE), its result and logs too.
        BenchmarkRun.objects.filter(pk__in=run_ids).delete()
        dropped += len(run_ids)
    return dropped
