"""Answers to HTMX polls, the same way for every polled fragment (the lab's runs
panel, a run's status, the instructor's class grid).

A class polls every few seconds and most polls change nothing. A fragment names the
version it shows in its own markup (`{% poll_version %}`, portal/templatetags/
polling.py): HTMX sends it back with each poll as If-None-Match, and a poll that
would bring the same fragment gets a 304 before anything is rendered, which HTMX
leaves unswapped (templates/base.html). In the markup, not only in the ETag: the
runs panel a start of runs draws (a POST) knows its version too, so its first poll
is a 304 when nothing moved, as it mostly is while the runs wait for their place in
the rate limit. Once there is nothing left to follow, the last answer is shown and
stops the polling (HTMX's status 286).
"""

from django.http import HttpRequest, HttpResponse, HttpResponseNotModified
from django_htmx.http import HttpResponseStopPolling


def unchanged(request: HttpRequest, version: str | None) -> HttpResponse | None:
    """A 304 if the poller already has this version of the fragment, else None.
    No version (None): always rendered."""
    if version is None:
        return None
    etag = f'"{version}"'
    if request.headers.get("If-None-Match") == etag:
        return HttpResponseNotModified(headers={"ETag": etag})
    return None


def poll_answer(
    response: HttpResponse, *, still_polling: bool, version: str | None = None
) -> HttpResponse:
    """The rendered fragment as a poll's answer: the last one (286), or one the
    browser revalidates with its version next time."""
    if not still_polling:
        response.status_code = HttpResponseStopPolling.status_code
    elif version is not None:
        response["ETag"] = f'"{version}"'
        response["Cache-Control"] = "private, no-cache"
    return response
