"""'My storage': how full am I, on which target, what will the purge take, what fills my
space, and where should this job's data go?"""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from exercises.catalogue.profiles import active_profile
from exercises.quotas import scan_pages, scans, status
from exercises.quotas.models import StorageScan
from exercises.quotas.outlook import concerns as site_outlook
from exercises.weather import pages as weather_pages
from jobs.results import ResultRefused
from portal.models import ClusterAccount
from portal.permissions import is_staff, only_if


@login_required
def my_storage(request: HttpRequest) -> HttpResponse:
    """The logged-in user's own figures only: nothing here names another account (staff
    see everyone's in the admin and on the outlook page)."""
    profile = active_profile()
    account = ClusterAccount.objects.filter(user=request.user).first()
    if request.htmx:
        # The scan card's poll, every 2 s while a scan goes (its state only); once the
        # scan has ended, the whole page again, with what it found.
        scan = scan_pages.state_of(account, []) if account else None
        response = render(request, "quotas/my_storage.html#scan-state", {"scan": scan})
        if scan is None or scan.going is None:
            response["HX-Refresh"] = "true"
        return response
    rows = status.for_account(profile, account) if account else []
    targets = [row.target for row in rows] if rows else list(profile.targets.all())
    scan = scan_pages.state_of(account, targets) if account else None
    for row in rows:
        row.scanned = scan.of(row.target) if scan else None
    weather = weather_pages.weather(targets)  # one query for every target
    ctx = {
        # Each target's weather now, beside how full it is: a slow target is not the user's fault.
        "weather": [(target, weather[target.pk]) for target in targets],
        "profile": profile,
        "account": account,
        "rows": rows,
        "scan": scan,
        "keep_on": _keep_on(targets),
        "warning_percent": status.WARNING_PERCENT,
        "critical_percent": status.CRITICAL_PERCENT,
    }
    return render(request, "quotas/my_storage.html", ctx)


def _keep_on(targets: list) -> str:
    """Where files the purge would take could go: the shared, lasting target without a
    purge that has the most room per account ("$GLOBAL"), or ''."""
    lasting = [
        t for t in targets if t.shared and t.persistent and not t.purge_days and t.variable is None
    ]
    lasting.sort(key=lambda t: -(t.quota_bytes or 0))
    return lasting[0].name if lasting else ""


@only_if(is_staff, "Only staff see every user's storage outlook.")
def outlook(request: HttpRequest) -> HttpResponse:
    """Staff: who fills within 7 days, and whose files the purge takes within 3."""
    profile = active_profile()
    return render(
        request,
        "quotas/outlook.html",
        {
            "profile": profile,
            "concerns": site_outlook(profile),
            "notices": settings.STORAGE_NOTICES,
        },
    )


@require_POST
@login_required
def scan_start(request: HttpRequest) -> HttpResponseBase:
    """Starts a scan of the user's directories (one going at a time; a second click, or
    one within SCAN_AGAIN_MINUTES of the last, gets that one). This request saves it
    only: a Celery task hands its job to Slurm (jobs/app_jobs.py), and the scan's card
    follows it, Slurm's refusal included."""
    account = ClusterAccount.objects.filter(user=request.user).first()
    if account is None:
        messages.error(request, "Your login has no cluster account: there is nothing to scan.")
        return redirect("quotas:my-storage")
    profile = active_profile()
    before = scans.latest(account)
    scan = scans.start(account, list(profile.targets.all()))
    if scan.status == StorageScan.Status.FAILED and scan != before:
        messages.error(request, f"The scan could not start: {scan.error}. Try again later.")
    elif scan == before and scan.status != StorageScan.Status.SUBMITTED:
        messages.info(request, "Your storage was scanned a few minutes ago: these are its figures.")
    return redirect(reverse("quotas:my-storage") + "#scan")


@csrf_exempt  # posted by the scan's job, authenticated by the scan's secret
@require_POST
def scan_result(request: HttpRequest, key: str) -> HttpResponse:
    scan = get_object_or_404(StorageScan.objects.select_related("account"), key=key)
    try:
        scans.receive(
            scan,
            request.headers.get("X-Storagelab-Token", ""),
            request.body,
            request.headers.get("X-Scan-Exit", "0"),
        )
    except ResultRefused as e:
        return HttpResponse(f"{e}\n", status=e.status, content_type="text/plain")
    return HttpResponse("accepted\n", status=202, content_type="text/plain")
