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
"""

import re
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string

from portal.units import MiB

# A multipart form's boundaries and headers around the uploaded file.
FORM_OVERHEAD = 64 * 1024
RESULT_PATH = re.compile(r"^/jobs/runs/[0-9a-f-]{36}/result$")
DARSHAN_UPLOAD_PATH = "/check-my-job/upload"
RUN_LOGS_PATH = re.compile(r"^/check-my-job/runs/[0-9a-f-]{36}/logs$")


def body_limit(path: str) -> int:
    """The largest body a request to `path` may have."""
    if RESULT_PATH.match(path):
        return settings.RESULT_MAX_BYTES
    if RUN_LOGS_PATH.match(path):
        return settings.RUN_DARSHAN_MAX_BYTES
    if path == DARSHAN_UPLOAD_PATH:
        return settings.DARSHAN_MAX_BYTES + FORM_OVERHEAD
    return settings.REQUEST_MAX_BYTES


class RequestBodyLimit:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        declared = request.META.get("CONTENT_LENGTH") or "0"
        limit = body_limit(request.path_info)
        # Not a number: Django reads no body at all, so neither is there one to cap.
        if declared.isdigit() and int(declared) > limit:
            return too_large(request, int(declared), limit)
        return self.get_response(request)


def too_large(request: HttpRequest, declared: int, limit: int) -> HttpResponse:
    """413: a page for a browser (a form's upload), a line for a program (a job's curl)."""
    if "text/html" in request.headers.get("Accept", ""):
        # A person knows the size of their file: the limit they read on the form.
        shown = limit - FORM_OVERHEAD if request.path_info == DARSHAN_UPLOAD_PATH else limit
        ctx = {
            "site_name": settings.SITE_NAME,
            "declared_mib": f"{declared / MiB:,.1f}",
            "limit_mib": f"{shown / MiB:,.1f}",
        }
        return HttpResponse(render_to_string("413.html", ctx), status=413)
    return HttpResponse(
        f"The request's body is {declared:,} bytes, more than the {limit:,} this address takes.\n",
        status=413,
        content_type="text/plain; charset=utf-8",
    )
