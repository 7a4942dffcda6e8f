"""What HTMX reads from a fragment the portal sends."""

import html
import json
import re


def poll_headers(fragment: str) -> dict[str, str]:
    """The headers HTMX sends with the fragment's next poll (its hx-headers)."""
    found = re.search(r'hx-headers="([^"]*)"', fragment)
    assert found, "the polled fragment names no version"
    return json.loads(html.unescape(found[1]))
