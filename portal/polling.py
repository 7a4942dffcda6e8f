"""Answers to HTMX polls, the same way for every polled fragment (the lab's runs
panel, a run's status, the instructor's class grid).

A class polls every few seconds and most polls change nothing: the fragment goes
out with its version as an ETag, and a poll that sends that version back gets a
304 before anything is rendered. Once there is nothing left to follow, the last
answer is shown and stops the polling (HTMX's status 286).
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
