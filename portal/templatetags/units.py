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
def mb_from_mib(mib: float | None) -> float | None:
    return None if mib is None else units.mb(mib * units.MiB)
