"""A run's figure, in one place: which measured figures can be true, how they read in
MiB/s (or files per second, for metadata), and how every page and sentence writes them.

Parsers refuse a figure no storage can deliver (jobs/engines/base.py), but a row
stored before they did, or edited by hand, must not reach a page or a median. So the
rule is here twice, in Python (`figure`) and in SQL (`plausible_q`), from the same
ceilings, and nothing else in the portal says it: a figure this module leaves out is
left out of the runs table, the run page, every median, the export and the advisor
alike. RunResult's methods (jobs/models.py) and the `figure` filter
(jobs/templatetags/figures.py) are the ways in."""

import math

from django.db.models import F, Q

from portal.units import mib

# No storage delivers more than 1 TiB/s to one process (memory bandwidth itself is
# ~10-100 GiB/s): a figure beyond it cannot have been measured.
MAX_BYTES_PER_S_PER_PROCESS = 2**40
# No file operation takes less than 10 ns (a cached stat takes about a microsecond).
MAX_OPS_PER_S_PER_PROCESS = 10**8

# The bandwidths, stored in bytes/s and read in MiB/s.
BANDWIDTH_FIELDS = ("write_bytes_per_s", "read_bytes_per_s")
# mdtest's file phases: operations per second, in this order.
RATE_FIELDS = ("create_ops_s", "stat_ops_s", "read_ops_s", "remove_ops_s")


def ceiling(field: str) -> int:
    """The most one process can have measured of `field`."""
    if field in BANDWIDTH_FIELDS:
        return MAX_BYTES_PER_S_PER_PROCESS
    if field in RATE_FIELDS:
        return MAX_OPS_PER_S_PER_PROCESS
    raise ValueError(f"{field} is no figure of a run")


def plausible(field: str, value: float | None, processes: int | None) -> bool:
    """Whether `value` of `field` can have been measured by `processes` processes."""
    return (
        value is not None
        and math.isfinite(value)
        and 0 < value <= (processes or 1) * ceiling(field)
    )


def plausible_q(field: str, prefix: str = "") -> Q:
    """`plausible` in SQL, for a RunResult query (`prefix`: "result__" from a run's).
    NaN and infinities compare above any number in PostgreSQL: the upper bound leaves
    them out too."""
    return Q(
        **{
            f"{prefix}{field}__gt": 0,
            f"{prefix}{field}__lte": F(f"{prefix}processes") * ceiling(field),
        }
    )


def figure(field: str, value: float | None, processes: int | None) -> float | None:
    """The figure people read of a stored `value`: MiB/s for a bandwidth, files per
    second for a rate; None for none, or for one that cannot be true."""
    if not plausible(field, value, processes):
        return None
    return mib(value) if field in BANDWIDTH_FIELDS else value


def shown(value: float | None) -> str:
    """A figure as every table and sentence writes it: to 0.1, thousands grouped
    ('9,029.5'); '–' for none."""
    if value is None or not math.isfinite(value):
        return "–"
    return f"{value:,.1f}"


def series_figures(series: object, processes: int | None) -> list[tuple[int, float | None]]:
    """A sweep ([[request bytes, write bytes/s], ...], as stored or as parsed) as people
    read it: (request bytes, MiB/s or None where the figure cannot be true); [] for
    anything that is not one."""
    if not isinstance(series, list | tuple):
        return []
    points = []
    for point in series:
        if (
            isinstance(point, list | tuple)
            and len(point) == 2
            and all(isinstance(v, int | float) for v in point)
        ):
            points.append((int(point[0]), figure("write_bytes_per_s", float(point[1]), processes)))
    return points
