"""What HTMX reads from a fragment the portal sends."""

import html
import json
import re


def poll_headers(fragment: str) -> dict[str, str]:
    """The headers HTMX sends with the fragment's next poll (its hx-headers)."""
    found = re.search(r'hx-headers="([^"]*)"', fragment)
    assert found, "the polled fragment names no version"
    return json.loads(html.unescape(found[1]))


def poll_url(fragment: str) -> str:
    """Where the fragment's polling element sends its polls (its hx-get)."""
    found = re.search(r'hx-get="([^"]*)"[^>]*hx-trigger="every', fragment)
    assert found, "nothing in the fragment polls"
    return html.unescape(found[1])
