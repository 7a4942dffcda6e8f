import os

from celery import Celery
from celery.signals import beat_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")

app = Celery("portal")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


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
