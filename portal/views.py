import math

from django.conf import settings
from django.contrib import auth, messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from portal import oidc, remote_user
from portal.health import healthy_recently, run_checks
from portal.models import ClusterAccount


@login_required
def home(request: HttpRequest) -> HttpResponse:
    account = ClusterAccount.objects.filter(user=request.user).first()
    return render(request, "portal/home.html", {"cluster_account": account})


@never_cache
def healthz(request: HttpRequest) -> HttpResponse:
    """A plain "ok"/"failing" with 200/503 for load balancers (from checks a few
    seconds old at most); fresh checks with their details for staff."""
    if request.user.is_authenticated and request.user.is_staff:
        checks = run_checks()
        healthy = all(check.ok for check in checks)
        ctx = {"checks": checks, "healthy": healthy}
        return render(request, "portal/healthz.html", ctx, status=200 if healthy else 503)
    healthy = healthy_recently()
    return HttpResponse(
        "ok\n" if healthy else "failing\n",
        status=200 if healthy else 503,
        content_type="text/plain",
    )


def locked_out(
    request: HttpRequest, original_response: HttpResponse | None = None, credentials=None
) -> HttpResponse:
    """What django-axes shows when a login is refused: the user name paused from this
    address after failed logins, or a try that waits its turn for a user name many
    addresses tried (portal/lockouts.py)."""
    wait = getattr(request, "login_wait_seconds", None)
    ctx = {
        "limit": settings.AXES_FAILURE_LIMIT,
        "minutes": round(settings.AXES_COOLOFF_TIME.total_seconds() / 60),
        "wait": wait,
        "wait_minutes": math.ceil(wait / 60) if wait else None,
    }
    response = render(request, "registration/locked_out.html", ctx, status=429)
    if wait:
        response["Retry-After"] = str(wait)
    return response


def login(request: HttpRequest) -> HttpResponse:
    """The local form, always there (the demo, break-glass admins); with OIDC, the
    provider's button above it."""
    ctx = {
        "login_method": settings.LOGIN_METHOD,
        "oidc_provider": settings.OIDC_PROVIDER_NAME,
        "site_name": settings.SITE_NAME,  # LoginView's own is the host name
    }
    # Behind a front end, whoever it names is logged in before this page: go on.
    go_on = settings.LOGIN_METHOD == "remote_user"
    view = auth_views.LoginView.as_view(extra_context=ctx, redirect_authenticated_user=go_on)
    return view(request)


@require_POST
def logout(request: HttpRequest) -> HttpResponse:
    """Ends the portal session, and sends a single sign-on login on to log out there
    too when the site says where; the front end's session would otherwise log a
    REMOTE_USER login straight back in at the next page."""
    single_sign_out = oidc.end_session_url(request)
    front_end = request.session.get(auth.BACKEND_SESSION_KEY) == remote_user.BACKEND
    if front_end:
        single_sign_out = settings.REMOTE_USER_LOGOUT_URL or None
    auth.logout(request)
    if front_end and not single_sign_out:
        messages.info(
            request,
            "You are still logged in through your site's single sign-on, which logs you "
            f"back in to {settings.SITE_NAME}. Close the browser to log out everywhere.",
        )
    return redirect(single_sign_out or settings.LOGOUT_REDIRECT_URL)
