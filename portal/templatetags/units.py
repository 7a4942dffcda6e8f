"""Sizes and fractions in templates (portal/units.py). A run's figure has its own
filters, which apply its rule: jobs/templatetags/figures.py."""

from django import template

from portal import units

register = template.Library()


@register.filter
def iec(size: float | None) -> str:
    return "" if size is None else units.iec(size)


@register.filter
def percent(fraction: float | None) -> str:
    """A fraction as a percentage, '4.2 %'; '–' for none."""
    if fraction is None:
        return "–"
    return f"{fraction * 100:.1f} %"


@register.filter
def spoken(seconds: float | None) -> str:
    """A time in seconds as people say it (portal/units.py: spoken_seconds)."""
    return "–" if seconds is None else units.spoken_seconds(seconds)


@register.filter
def times(ratio: float | None) -> str:
    """A ratio as the lab says it, '2.3×' (portal/units.py: times)."""
    return units.times(ratio)
