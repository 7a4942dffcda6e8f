"""A run's figure in templates, written as every page writes it (jobs/figures.py:
shown): to 0.1, thousands grouped, '–' for none.

    {% load figures %}
    {{ run.result.write_mib_s|figure }}        {# 9,029.5 #}
    {{ row.my_median|with_mb }}                {# 9,029.5 (9,468.2): MB/s beside #}"""

from django import template

from jobs.figures import shown
from portal.units import MB, MiB

register = template.Library()


def _number(value: object) -> float | None:
    """A template hands over "" for what it could not look up (a run with no result
    yet): that is no figure either."""
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


@register.filter
def figure(value: object) -> str:
    return shown(_number(value))


@register.filter
def in_mb(mib_s: object) -> float | None:
    """A MiB/s figure in MB/s (base 10), as vendors publish theirs."""
    mib_s = _number(mib_s)
    return None if mib_s is None else mib_s * MiB / MB


@register.filter
def with_mb(mib_s: object) -> str:
    """A MiB/s figure with its MB/s in brackets, '1,234.5 (1,294.5)'; '–' for none."""
    if _number(mib_s) is None:
        return "–"
    return f"{shown(_number(mib_s))} ({shown(in_mb(mib_s))})"
