"""The run lifecycle's Celery tasks, imported here for Celery's autodiscovery. Each
lives beside its work and keeps the name it had here ("jobs.tasks.<name>"), which
the beat schedule and messages already queued use."""

from jobs.app_jobs import submit_app_job
from jobs.handover import submit_run, submit_runs
from jobs.results import ingest_result
from jobs.retention import drop_raw_outputs
from jobs.sync import sync_runs

__all__ = [
    "drop_raw_outputs",
    "ingest_result",
    "submit_app_job",
    "submit_run",
    "submit_runs",
    "sync_runs",
]
