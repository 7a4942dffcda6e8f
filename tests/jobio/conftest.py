import io
from collections.abc import Iterator
from types import SimpleNamespace

import pytest
from django.core.management import call_command
from django.db import transaction

from exercises.models import SiteProfile
from portal.celery import app


@pytest.fixture
def vsc3(db, settings) -> SiteProfile:
    call_command("load_site_profile", "vsc3", stdout=io.StringIO())
    settings.SITE_PROFILE = "vsc3"
    return SiteProfile.objects.get(name="vsc3")


@pytest.fixture
def tasks_run_at_commit(monkeypatch) -> Iterator[None]:
    """The read task runs within the request, as a worker would once the check is
    committed (a test's transaction never commits)."""
    immediate = SimpleNamespace(atomic=transaction.atomic, on_commit=lambda f, **kw: f())
    monkeypatch.setattr("jobio.checks.transaction", immediate)
    eager = app.conf.task_always_eager
    app.conf.task_always_eager = True
    try:
        yield
    finally:
        app.conf.task_always_eager = eager
