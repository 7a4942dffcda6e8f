"""The weather in other apps' templates.

{% load weather %}
{% with note=slow_now|slow_note:rec.target_key %}{% if note %}…{% endif %}{% endwith %}"""

from django import template

register = template.Library()


@register.filter
def slow_note(slow_now: object, target_key: str) -> str:
    """The "slow now" sentence of a target (exercises/weather/pages.py: slow_now), or
    "" (also where a page gave no such mapping)."""
    return slow_now.get(target_key, "") if isinstance(slow_now, dict) else ""
