"""Readings made in the database for the weather's tests: each with a canary run of its
own, as canaries.py makes them."""

from datetime import datetime, timedelta

from django.utils import timezone

from exercises.catalogue.models import SiteProfile
from exercises.weather.models import Kind, Reading
from jobs.models import RunStatus
from portal.models import ClusterAccount
from tests.runs import make_run


def reading(
    account: ClusterAccount,
    profile: SiteProfile,
    target_key: str,
    figure: float | None,
    usual: float | None = 200.0,
    *,
    ago: timedelta = timedelta(minutes=5),
    kind: Kind = Kind.STREAMING,
    during_class: bool = False,
    now: datetime | None = None,
) -> Reading:
    """A settled reading on the profile's target `target_key`, taken `ago`."""
    target = profile.targets.get(key=target_key)
    taken = (now or timezone.now()) - ago
    run = make_run(account, target, status=RunStatus.COMPLETED, started_at=taken, ended_at=taken)
    return Reading.objects.create(
        target=target,
        kind=kind,
        run=run,
        taken_at=taken,
        figure=figure,
        usual=usual,
        during_class=during_class,
        problem="" if figure is not None else "failed",
    )
