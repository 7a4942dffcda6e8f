"""'My storage': how full am I, on which target, and where should this job's data go?"""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from exercises.catalogue.profiles import active_profile
from exercises.quotas import status
from exercises.weather import pages as weather_pages
from portal.models import ClusterAccount


@login_required
def my_storage(request: HttpRequest) -> HttpResponse:
    """The logged-in user's own figures only: nothing here names another account (staff
    see everyone's in the admin)."""
    profile = active_profile()
    account = ClusterAccount.objects.filter(user=request.user).first()
    rows = status.for_account(profile, account) if account else []
    targets = [row.target for row in rows] if rows else list(profile.targets.all())
    weather = weather_pages.weather(targets)  # one query for every target
    ctx = {
        # Each target's weather now, beside how full it is: a slow target is not the user's fault.
        "weather": [(target, weather[target.pk]) for target in targets],
        "profile": profile,
        "account": account,
        "rows": rows,
        "warning_percent": status.WARNING_PERCENT,
        "critical_percent": status.CRITICAL_PERCENT,
    }
    return render(request, "quotas/my_storage.html", ctx)
