"""Fixtures the tests of jobs share."""

import pytest

from jobs.models import BenchmarkRun
from tests.runs import make_run


@pytest.fixture
def run(make_user, disk_target) -> BenchmarkRun:
    """A queued run of a trainee of their own, on the dev disk target."""
    return make_run(make_user("sl-trainee6").cluster_account, disk_target)
