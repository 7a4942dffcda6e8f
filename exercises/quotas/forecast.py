"""When a target fills at the recent pace. The pace is the Theil–Sen slope of the last
WINDOW days of samples: the median of the slopes between every two of them, so a
one-off spike (a big file written and removed) moves it little where a straight line's
least squares would follow it. The range is that of the middle half of those slopes.
No forecast from less than MIN_DAYS of history, or from a pace that does not grow; the
reason is said instead."""

import statistics
from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import combinations

WINDOW = timedelta(days=14)
MIN_DAYS = 3
DAY = 86400.0
# A pace below this share of the limit a day is flat: no forecast of years ahead.
FLAT_SHARE_A_DAY = 0.001


@dataclass(frozen=True)
class Forecast:
    per_day: float | None  # units (bytes or files) a day, at the median pace
    days: float | None  # to the limit at that pace; None: no forecast, `why` says why
    soonest: float | None = None  # at the faster quartile's pace
    latest: float | None = None  # at the slower quartile's; None: it may never fill
    why: str = ""

    @property
    def within_a_week(self) -> bool:
        return self.days is not None and self.days <= 7


def forecast(
    points: list[tuple[datetime, int]], used: int, limit: int | None, now: datetime
) -> Forecast:
    """`points`: (when, usage), oldest first; `used` the usage now, `limit` where trouble
    starts (the soft limit, else the hard one)."""
    if limit is None:
        return Forecast(None, None, why="There is no limit here to fill.")
    if used >= limit:
        return Forecast(None, 0.0, why="It is full now.")
    recent = [(at, value) for at, value in points if at >= now - WINDOW]
    if len(recent) < 3 or (recent[-1][0] - recent[0][0]).total_seconds() < MIN_DAYS * DAY:
        span = (recent[-1][0] - recent[0][0]).total_seconds() / DAY if recent else 0
        return Forecast(
            None,
            None,
            why=f"Not enough history yet: {span:.1f} days of it, and a forecast needs {MIN_DAYS}.",
        )
    slopes = sorted(
        (b_value - a_value) / ((b_at - a_at).total_seconds() / DAY)
        for (a_at, a_value), (b_at, b_value) in combinations(recent, 2)
        if b_at > a_at
    )
    pace = statistics.median(slopes)
    if pace <= FLAT_SHARE_A_DAY * limit:
        return Forecast(
            pace,
            None,
            why=f"Your usage has not grown over the last {WINDOW.days} days: at this "
            "pace it does not fill.",
        )
    quartiles = statistics.quantiles(slopes, n=4) if len(slopes) >= 4 else [pace, pace, pace]
    fast, slow = max(quartiles[2], pace), min(quartiles[0], pace)
    room = limit - used
    return Forecast(
        per_day=pace,
        days=room / pace,
        soonest=room / fast,
        latest=room / slow if slow > FLAT_SHARE_A_DAY * limit else None,
    )
