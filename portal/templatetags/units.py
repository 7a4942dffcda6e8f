"""Throughput units in templates (portal/units.py): stored in bytes/s; shown as
MiB/s (base 2) with MB/s (base 10) beside it, since tools and vendors use both."""

from django import template

from portal import units

register = template.Library()


@register.filter
def iec(size: float | None) -> str:
    return "" if size is None else units.iec(size)


@register.filter
def mib_s(bytes_per_s: float | None) -> float | None:
    return units.mib(bytes_per_s)


@register.filter
def mb_s(bytes_per_s: float | None) -> float | None:
    return units.mb(bytes_per_s)


@register.filter
def mib_and_mb(mib: float | None, digits: int = 1) -> str:
    """A MiB/s figure with its MB/s in brackets, '123.4 (129.4)'; '–' for none."""
    if not mib:
        return "–"
    return f"{mib:.{digits}f} ({units.mb(mib * units.MiB):.{digits}f})"


@register.filter
def percent(fraction: float | None) -> str:
    """A fraction as a percentage, '4.2 %'; '–' for none."""
    if fraction is None:
        return "–"
    return f"{fraction * 100:.1f} %"
