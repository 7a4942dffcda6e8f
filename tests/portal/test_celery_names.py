"""Every task the beat schedule starts, or a route sends to its queue, is a task a
worker knows by that name: a task that moved between modules (the split of the
teaching domain into apps) keeps the name queued messages and the schedule use."""

from django.conf import settings

from portal.celery import app


def registered() -> set[str]:
    app.loader.import_default_modules()  # what a worker imports as it starts
    return set(app.tasks)


def test_the_beat_schedule_names_tasks_a_worker_knows() -> None:
    scheduled = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}

    assert scheduled - registered() == set()
    assert "exercises.tasks.advance_calibrations" in scheduled  # the name before the split


def test_every_routed_task_is_a_task_a_worker_knows() -> None:
    assert set(settings.CELERY_TASK_ROUTES) - registered() == set()
