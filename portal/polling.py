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

import hashlib
import re

from django.core.cache import cache
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


# A fragment made of pieces (the class grid's rows, its counts, its figures): a poll
# that is not a 304 sends only the pieces whose markup changed since the version the
# poller holds. Which markup that version had is remembered in the cache by a digest
# of that markup, so every poller that holds it gets the same answer, whichever web
# worker answers; forgotten (after PIECES_SECONDS, or a cache flush), everything is
# sent again.
PIECES_SECONDS = 15 * 60


def _digest(markup: str) -> str:
    return hashlib.blake2b(markup.encode(), digest_size=8).hexdigest()


def held_version(request: HttpRequest) -> tuple[str, str]:
    """The (stamp, content digest) of the version the poller holds, or ("", "")."""
    held = request.headers.get("If-None-Match", "").strip('"')
    stamp, _, content = held.partition("/")
    return stamp, content


def changed_pieces(
    scope: str, held_content: str, pieces: dict[str, str]
) -> tuple[str, dict[str, str] | None, set[str]]:
    """The digest of `pieces` (piece id -> markup), the pieces the poller lacks (None:
    it may hold anything, send them all) and the ids of the pieces it holds."""
    digests = {key: _digest(markup) for key, markup in pieces.items()}
    content = _digest("".join(f"{k}={d};" for k, d in sorted(digests.items())))
    cache.set(f"pieces:{scope}:{content}", digests, PIECES_SECONDS)
    held = cache.get(f"pieces:{scope}:{held_content}") if held_content else None
    if held is None:
        return content, None, set()
    fresh = {key: pieces[key] for key, d in digests.items() if held.get(key) != d}
    return content, fresh, set(held)


def oob(markup: str) -> str:
    """The markup as an out-of-band swap of the element it is, found by its id."""
    return OPENING_TAG.sub(r'<\1 hx-swap-oob="true"', markup, count=1)


OPENING_TAG = re.compile(r"^\s*<(\w+)")
