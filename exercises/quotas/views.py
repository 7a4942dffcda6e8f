"""'My storage': how full am I, on which target, and where should this job's data go?"""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from exercises.catalogue.profiles import active_profile
from exercises.quotas import status
from portal.models import ClusterAccount


@login_required
def my_storage(request: HttpRequest) -> HttpResponse:
    """The logged-in user's own figures only: nothing here names another account (staff
    see everyone's in the admin)."""
    profile = active_profile()
    account = ClusterAccount.objects.filter(user=request.user).first()
    ctx = {
        "profile": profile,
        "account": account,
        "rows": status.for_account(profile, account) if account else [],
        "warning_percent": status.WARNING_PERCENT,
        "critical_percent": status.CRITICAL_PERCENT,
    }
    return render(request, "quotas/my_storage.html", ctx)
