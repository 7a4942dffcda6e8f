"""Celery tasks: thin, idempotent, taking ids. The work is in jobs/services.py."""

from celery import shared_task
from celery.app.task import Task

from jobs import services
from jobs.slurm import SlurmError


# No retry limit: a run waits as long as Slurm is away (it says "queued", and can be
# cancelled); the sync cycle enqueues again any run whose task was lost.
@shared_task(bind=True, max_retries=None, throws=(SlurmError,))
def submit_run(self: Task, run_id: int, slot_taken: bool = False) -> None:
    try:
        services.submit(run_id, slot_taken=slot_taken)
    except services.RateLimited as e:
        # Come back when the reserved place in the rate limit is due.
        raise self.retry(countdown=e.delay, args=(run_id,), kwargs={"slot_taken": True})
    except SlurmError as e:
        if e.permanent:
            raise
        # slurmrestd or slurmctld away: back off, up to 30 s between tries.
        raise self.retry(exc=e, countdown=min(2 ** min(self.request.retries, 5), 30))


@shared_task(throws=(SlurmError,))
def sync_runs() -> None:
    services.sync()


@shared_task
def ingest_result(run_id: int) -> None:
    services.ingest(run_id)
