"""Which of a calibration round's figures can be the target's own.

A round's runs are its starter's jobs, and a job posts its own output: a figure can
be forged, or garbled by a fault, and once kept it is the site's reference on every
page. So before a pair's median is taken, a figure is kept out when:
- it is a bandwidth above CEILING_FACTOR times the target's declared peak speed (its
  profile's `peak_speed`, when that names one: "20 MiB/s", "1.5 GB/s"), or
- it is more than OUTLIER_FACTOR times away from the median of the pair's other
  figures in the round (with three figures or more: one run cannot outvote two).
What is kept out is shown in the round's summary and beside the reference, never
averaged in.
"""

import re
import statistics

from exercises.catalogue.models import BANDWIDTH_METRICS, Metric, StorageTarget
from jobs.figures import shown
from portal.units import MiB

CEILING_FACTOR = 2.0
OUTLIER_FACTOR = 10.0
# "20 MiB/s, the cap on its device", "up to 1.5 GB/s": a number and a bandwidth unit.
PEAK = re.compile(r"([0-9]{1,9}(?:[.,][0-9]{1,6})?)[ \t]*([KMGT])(i?)B/s", re.IGNORECASE)
POWERS = {"K": 1, "M": 2, "G": 3, "T": 4}


def peak_mib_s(target: StorageTarget) -> float | None:
    """The target's declared peak bandwidth in MiB/s, if its profile names one."""
    found = PEAK.search(target.peak_speed or "")
    if not found:
        return None
    number = float(found[1].replace(",", "."))
    base = 1024 if found[3] else 1000  # MiB/s or MB/s
    return number * base ** POWERS[found[2].upper()] / MiB


def kept_out(values: list[float], metric: Metric, target: StorageTarget) -> dict[int, str]:
    """The figures of `values` (by index) that cannot be the target's, each with why."""
    out: dict[int, str] = {}
    peak = peak_mib_s(target) if metric in BANDWIDTH_METRICS else None
    if peak:
        for i, value in enumerate(values):
            if value > CEILING_FACTOR * peak:
                out[i] = f"above {CEILING_FACTOR:g}× its peak of {shown(peak)} MiB/s"
    rest = [(i, v) for i, v in enumerate(values) if i not in out]
    for i, value in rest:
        others = [v for j, v in rest if j != i]
        if len(others) < 2:
            continue
        median = statistics.median(others)
        if median > 0 and not median / OUTLIER_FACTOR <= value <= median * OUTLIER_FACTOR:
            out[i] = f"over {OUTLIER_FACTOR:g}× away from the other runs' median of {shown(median)}"
    return out
