import logging
import os

from celery import Celery, Task
from celery.signals import beat_init, task_postrun, task_prerun
from django.db import close_old_connections
from kombu.exceptions import OperationalError as BrokerUnavailable

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")

app = Celery("portal")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

log = logging.getLogger(__name__)


def open_broker_for_web() -> None:
    """Called once per web worker as it starts (portal/wsgi.py): the worker's first
    start of runs would otherwise finalize the app, set up its result backend and
    open the broker connection, ~0.2 s measured, on top of a trainee's click. A
    broker down here costs the worker's start one quick retry and changes nothing
    else: the first submission tries again, and its page says so if the broker is
    still away (jobs/submission.py: _enqueue)."""
    app.finalize(auto=True)
    app.backend  # noqa: B018 (set up here, not in the first request)
    try:
        with app.producer_or_acquire() as producer:
            producer.connection.ensure_connection(max_retries=1, interval_start=0, timeout=2)
    except (BrokerUnavailable, OSError) as e:
        log.warning("The broker did not answer as this web worker started (%s)", e)


@beat_init.connect
def collect_quotas_at_start(**kwargs: object) -> None:
    """Quotas are collected once when beat starts, not one QUOTA_INTERVAL_SECONDS
    later: beat keeps its schedule in a file across restarts, so a freshly started
    portal (or a restarted container) would show "never collected" for up to ten
    minutes.

    Here rather than in the dev scripts (`manage.py collect_quotas` in up.sh): every
    site runs beat, as a service or a container of its own, so its start is the
    start of the portal's services everywhere, not only under `make demo`. Sent by
    the task's name, like the schedule's rounds, so it is routed to the same workers
    (where the filesystems are mounted) and beat itself needs none of the app's code.
    beat_init also fires for a beat embedded in a worker (`celery worker -B`)."""
    app.send_task("exercises.tasks.collect_quotas")


@task_prerun.connect
@task_postrun.connect
def reuse_database_connections(sender: Task, **kwargs: object) -> None:
    """Around every task, Django's own rule for database connections, as around every
    request of the web: kept for CONN_MAX_AGE while healthy (CONN_HEALTH_CHECKS), else
    closed. Celery would close them around every task instead (CELERY_DB_REUSE_MAX in
    settings.py tells it not to): PostgreSQL then starts a backend for each task, and a
    class's burst of 800 submissions took a new one for every claim of a run."""
    if not getattr(sender.request, "is_eager", False):
        close_old_connections()
