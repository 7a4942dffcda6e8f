"""Who may see a run: its owner, and staff (who look after every trainee's runs).
The run page (jobs/views.py) and its I/O summary (jobio/views.py) both ask here."""

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import QuerySet

from jobs.models import BenchmarkRun


def runs_visible_to(user: AbstractBaseUser | AnonymousUser) -> QuerySet[BenchmarkRun]:
    """The runs `user` may see; a view narrows it to one run, and a run outside it is
    answered as missing (another trainee's run is not said to exist)."""
    runs = BenchmarkRun.objects.all()
    if user.is_staff:
        return runs
    return runs.filter(user=user)
