"""Request bodies are capped before anything reads them.

Django reads a POST's body the first time anything asks for request.POST or FILES:
the CSRF check does, for every POST, before the view runs, and spools an upload to
memory or disk whole. So the cap is a middleware at the top of the stack, on the
declared length (Content-Length): a body beyond it is answered 413 unread. A body
with no length (chunked) is read by Django as empty, never more than it declares.

Limits by path: a job's output RESULT_MAX_BYTES, a run's Darshan logs
RUN_DARSHAN_MAX_BYTES, a Darshan upload DARSHAN_MAX_BYTES and its form's overhead,
anything else REQUEST_MAX_BYTES. The site's proxy should refuse larger bodies itself
(nginx: client_max_body_size; README, "Deploying at a site").

And by who sends it: a client not logged in sends nothing larger than a login form,
ANONYMOUS_MAX_BYTES, whatever the path's limit (an 8 MiB upload with a forged CSRF
cookie would be parsed by the CSRF check before the view sends it to log in). Who is
logged in is known only after the session and authentication middleware, so that cap
is a second middleware, `AnonymousBodyLimit`, placed after them: it still runs before
the CSRF check and the view read anything, since the CSRF check reads the form in its
process_view, which Django calls after every middleware's __call__. The job script's
posts (a result, a run's logs, a storage scan's answer) log nobody in: their secret
authenticates them,
and their own limits stand.
"""

import re
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import resolve_url
from django.template.loader import render_to_string

from portal.units import MiB

# A multipart form's boundaries and headers around the uploaded file.
FORM_OVERHEAD = 64 * 1024
RESULT_PATH = re.compile(r"^/jobs/runs/[0-9a-f-]{36}/result$")
DARSHAN_UPLOAD_PATH = "/check-my-job/upload"
RUN_LOGS_PATH = re.compile(r"^/check-my-job/runs/[0-9a-f-]{36}/logs$")
SCAN_RESULT_PATH = re.compile(r"^/storage/scans/[0-9a-f-]{36}/result$")


# A login form is a few hundred bytes; an upload waits until its sender logged in.
ANONYMOUS_MAX_BYTES = 64 * 1024


def posted_by_a_job(path: str) -> bool:
    """A job script's post, authenticated by its run's (or scan's) secret, not a login."""
    return any(p.match(path) for p in (RESULT_PATH, RUN_LOGS_PATH, SCAN_RESULT_PATH))


def declared_length(request: HttpRequest) -> int:
    """The body's declared length. Not a number: Django reads no body at all, so
    neither is there one to cap."""
    declared = request.META.get("CONTENT_LENGTH") or "0"
    return int(declared) if declared.isdigit() else 0


def body_limit(path: str) -> int:
    """The largest body a request to `path` may have."""
    if RESULT_PATH.match(path):
        return settings.RESULT_MAX_BYTES
    if RUN_LOGS_PATH.match(path):
        return settings.RUN_DARSHAN_MAX_BYTES
    if SCAN_RESULT_PATH.match(path):
        return settings.SCAN_RESULT_MAX_BYTES
    if path == DARSHAN_UPLOAD_PATH:
        return settings.DARSHAN_MAX_BYTES + FORM_OVERHEAD
    return settings.REQUEST_MAX_BYTES


class RequestBodyLimit:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        declared = declared_length(request)
        limit = body_limit(request.path_info)
        if declared > limit:
            return too_large(request, declared, limit)
        return self.get_response(request)


class AnonymousBodyLimit:
    """After the session and authentication middleware: a body over ANONYMOUS_MAX_BYTES
    from a client not logged in is answered 413 unread. The user (a session read) is
    looked up only for such a body."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        declared = declared_length(request)
        if (
            declared > ANONYMOUS_MAX_BYTES
            and not posted_by_a_job(request.path_info)
            and not request.user.is_authenticated
        ):
            return too_large(request, declared, ANONYMOUS_MAX_BYTES, logged_in=False)
        return self.get_response(request)


def too_large(
    request: HttpRequest, declared: int, limit: int, *, logged_in: bool = True
) -> HttpResponse:
    """413: a page for a browser (a form's upload), a line for a program (a job's curl)."""
    if "text/html" in request.headers.get("Accept", ""):
        # A person knows the size of their file: the limit they read on the form.
        shown = limit - FORM_OVERHEAD if request.path_info == DARSHAN_UPLOAD_PATH else limit
        ctx = {
            "site_name": settings.SITE_NAME,
            "declared_mib": f"{declared / MiB:,.1f}",
            "limit_mib": f"{shown / MiB:,.1f}",
            "logged_in": logged_in,
            "login_url": resolve_url(settings.LOGIN_URL),
        }
        return HttpResponse(render_to_string("413.html", ctx), status=413)
    if not logged_in:
        return HttpResponse(
            f"Log in first: the request's body is {declared:,} bytes, and a client not "
            f"logged in sends at most {limit:,}.\n",
            status=413,
            content_type="text/plain; charset=utf-8",
        )
    return HttpResponse(
        f"The request's body is {declared:,} bytes, more than the {limit:,} this address takes.\n",
        status=413,
        content_type="text/plain; charset=utf-8",
    )
