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
    minutes. By the task's name, so beat itself needs none of the app's code."""
    app.send_task("exercises.tasks.collect_quotas")
