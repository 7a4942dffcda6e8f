from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache

from portal.health import run_checks
from portal.models import ClusterAccount


@login_required
def home(request: HttpRequest) -> HttpResponse:
    account = ClusterAccount.objects.filter(user=request.user).first()
    return render(request, "portal/home.html", {"cluster_account": account})


@never_cache
def healthz(request: HttpRequest) -> HttpResponse:
    """A plain "ok"/"failing" with 200/503 for load balancers; details for staff."""
    checks = run_checks()
    healthy = all(check.ok for check in checks)
    status = 200 if healthy else 503
    if request.user.is_authenticated and request.user.is_staff:
        ctx = {"checks": checks, "healthy": healthy}
        return render(request, "portal/healthz.html", ctx, status=status)
    return HttpResponse(
        "ok\n" if healthy else "failing\n", status=status, content_type="text/plain"
    )
