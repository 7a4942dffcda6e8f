import io
from collections.abc import Iterator

import pytest
from django.core.management import call_command

from exercises.models import SiteProfile
from portal.celery import app


@pytest.fixture
def vsc3(db, settings) -> SiteProfile:
    call_command("load_site_profile", "vsc3", stdout=io.StringIO())
    settings.SITE_PROFILE = "vsc3"
    return SiteProfile.objects.get(name="vsc3")


@pytest.fixture
def tasks_run_at_commit(django_capture_on_commit_callbacks) -> Iterator[None]:
    """The read task runs in the test, as a worker would once the check is committed."""
    eager = app.conf.task_always_eager
    app.conf.task_always_eager = True
    try:
        with django_capture_on_commit_callbacks(execute=True):
            yield
    finally:
        app.conf.task_always_eager = eager
