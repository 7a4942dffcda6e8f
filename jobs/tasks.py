"""Celery tasks: thin, idempotent, taking ids. The work is in jobs/services.py."""

from celery import shared_task
from celery.app.task import Task

from jobs import services
from jobs.slurm import SlurmError


@shared_task(bind=True, max_retries=30, throws=(SlurmError,))
def submit_run(self: Task, run_id: int) -> None:
    try:
        services.submit(run_id)
    except services.RateLimited:
        raise self.retry(countdown=1)
    except SlurmError as e:
        if e.permanent:
            raise
        # slurmrestd or slurmctld away: back off, up to 30 s between tries. If the
        # outage outlasts the retries, the sync cycle enqueues the run again.
        raise self.retry(exc=e, countdown=min(2**self.request.retries, 30))


@shared_task(throws=(SlurmError,))
def sync_runs() -> None:
    services.sync()


@shared_task
def ingest_result(run_id: int) -> None:
    services.ingest(run_id)
