"""What a person reads when a request goes wrong: a 403, 404, 405 or 500 is a page of
the portal, in its words, saying what happened and where to go; never a class's or an
exception's name.

Which sentence: an exception's text is shown only when it was written for a person,
raised as `NotFound` or `Forbidden` ("No such course among the ones you joined.").
Django's own texts name the model or are no sentence at all (get_object_or_404's "No
BenchmarkRun matches the given query.", a Resolver404, a bare PermissionDenied): they
give way to the page's own sentence.

Where: handler403/404/500 (portal/urls.py) and CSRF_FAILURE_VIEW call the views here.
A 405 is no exception (require_POST answers HttpResponseNotAllowed itself), nor is an
HttpResponseForbidden a view returns: `ErrorPages`, a middleware, turns those bare
answers into the page, keeping their status and Allow header.

An HTMX request (a click in a panel, a poll) gets a short fragment, not a page: the
base template's htmx config swaps no 4xx or 5xx answer, so the panel stays as it was,
and a fragment keeps a whole page out of it whatever a template's config says.
"""

import logging
from collections.abc import Callable

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseForbidden,
    HttpResponseNotAllowed,
    HttpResponseServerError,
)
from django.shortcuts import render
from django.template import loader
from django.utils.html import format_html

log = logging.getLogger(__name__)


class NotFound(Http404):
    """A 404 whose message is a sentence for the person who asked: the page shows it."""


class Forbidden(PermissionDenied):
    """A 403 whose message is a sentence for the person who asked: the page shows it."""


# What an HTMX request that failed gets instead of a page (rarely seen: see above).
SHORT = {
    403: "You may not do this. Reload the page to see where you stand.",
    404: "This is not here any more. Reload the page.",
    405: "This address takes a form's button, not a link.",
    500: "Something went wrong on our side. Try again in a minute.",
}
CSRF_REFUSED = (
    "What you sent came from a page that was open too long, or from before you logged "
    "in or out, so it was not accepted. Go back, reload the page and send it again."
)
# When even the 500 page cannot be drawn (its template, the URLconf): plain HTML.
PLAIN_500 = (
    '<!doctype html><html lang="en"><head><meta charset="utf-8">'
    '<meta name="viewport" content="width=device-width, initial-scale=1">'
    "<title>Something went wrong</title></head><body><main><h1>Something went wrong on "
    "our side</h1><p>The portal could not answer this time. Try again in a minute; if it "
    'keeps happening, tell the HPC support team what you were doing.</p><p><a href="/">'
    "Back to the start page</a></p></main></body></html>"
)


def is_htmx(request: HttpRequest) -> bool:
    """As django-htmx decides, from the header alone: a 500 may come before its
    middleware ran."""
    return request.META.get("HTTP_HX_REQUEST") == "true"


def written_for_people(exception: Exception | None, kind: type[Exception]) -> str | None:
    """The exception's message if the portal wrote it for a person, else None."""
    if isinstance(exception, kind) and exception.args and isinstance(exception.args[0], str):
        return exception.args[0] or None
    return None


def error_page(
    request: HttpRequest, status: int, message: str | None = None, **headers: str
) -> HttpResponse:
    """The portal's page for `status` (templates/<status>.html), saying `message` if
    there is one and the page's own sentence otherwise; a fragment for HTMX."""
    if is_htmx(request):
        text = message or SHORT[status]
        response = HttpResponse(format_html('<p class="message error" role="alert">{}</p>', text))
        response.status_code = status
    else:
        response = render(request, f"{status}.html", {"message": message}, status=status)
    for name, value in headers.items():
        response[name] = value
    return response


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return error_page(request, 404, written_for_people(exception, NotFound))


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return error_page(request, 403, written_for_people(exception, Forbidden))


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """CSRF_FAILURE_VIEW. Django's `reason` ("CSRF cookie not set.") is for the log,
    which Django writes: the person is told what to do."""
    return error_page(request, 403, CSRF_REFUSED)


def server_error(request: HttpRequest) -> HttpResponse:
    """handler500: drawn without the request's context (its processors read the
    session, the user and the quotas: what failed may be the database), and plain
    HTML should the template fail too."""
    if is_htmx(request):
        return HttpResponseServerError(
            format_html('<p class="message error" role="alert">{}</p>', SHORT[500])
        )
    try:
        body = loader.render_to_string("500.html", {"site_name": settings.SITE_NAME})
    except Exception:
        log.exception("the 500 page could not be drawn; sent as plain HTML")
        body = PLAIN_500
    return HttpResponseServerError(body)


class ErrorPages:
    """Bare 405s (require_POST, require_http_methods) and 403s (an
    HttpResponseForbidden) become the portal's pages, with their status and Allow
    header. By class: a page a view renders with status 403 (a refused login) stays."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if isinstance(response, HttpResponseNotAllowed):
            return error_page(request, 405, Allow=response["Allow"])
        if isinstance(response, HttpResponseForbidden):
            return error_page(request, 403)
        return response
