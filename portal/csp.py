"""A Content-Security-Policy on every answer.

No page of the portal runs inline script or style: its scripts are files of its own
static (htmx from django-htmx, Chart.js from Debian, ours in static/js/), its styles
one stylesheet; htmx is told not to add its indicator <style> (`includeIndicatorStyles`
in base.html's htmx-config), and a bar's length is an SVG attribute, not a style. So
the policy allows the portal's own origin and nothing inline: a script that got into
a page (in a name, a job's output) does not run. tests/e2e/test_csp.py opens the main
pages in Chromium and finds nothing blocked.

SECURE_CSP names the directives as Django 6 does; there, Django's own middleware
(django.middleware.csp) takes this one's place.
"""

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

HEADER = "Content-Security-Policy"


def policy() -> str:
    return "; ".join(" ".join([name, *values]) for name, values in settings.SECURE_CSP.items())


class ContentSecurityPolicy:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response.setdefault(HEADER, policy())
        return response
