"""A polled fragment names the version it shows in its own markup (portal/polling.py):
its polls send it back, so a poll that would bring the same fragment gets a 304."""

import json

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString

register = template.Library()


@register.simple_tag
def poll_version(version: str | None) -> SafeString | str:
    """The polling element's attribute: HTMX sends these headers with each poll."""
    if not version:
        return ""
    return format_html(' hx-headers="{}"', json.dumps({"If-None-Match": f'"{version}"'}))
