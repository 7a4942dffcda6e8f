from collections.abc import Iterator
from types import SimpleNamespace

import pytest
from django.db import transaction

from exercises.catalogue.models import SiteProfile
from portal.celery import app
from tests.runs import use_site_profile


@pytest.fixture
def vsc3(db, settings) -> SiteProfile:
    return use_site_profile("vsc3", settings)


@pytest.fixture
def tasks_run_at_commit(monkeypatch) -> Iterator[None]:
    """The read task runs within the request, as a worker would once the check is
    committed (a test's transaction never commits)."""
    immediate = SimpleNamespace(atomic=transaction.atomic, on_commit=lambda f, **kw: f())
    monkeypatch.setattr("jobio.tasks.transaction", immediate)
    eager = app.conf.task_always_eager
    app.conf.task_always_eager = True
    try:
        yield
    finally:
        app.conf.task_always_eager = eager
