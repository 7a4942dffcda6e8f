"""The portal-wide submission rate limit (Redis): a class clicking at once cannot
flood slurmrestd, which has a few threads and about 124 connections."""

import time

from django.conf import settings
from django.core.cache import cache

# How far ahead a submission may be placed (10 min of a class's burst).
MAX_SLOT_AHEAD_SECONDS = 600
# The first second that may still have a place (every earlier one is full).
SUBMIT_FRONTIER_KEY = "jobs:submits:frontier"


class RateLimited(Exception):
    """Too many submissions now: a slot `delay` seconds ahead is reserved for this one,
    or, when none is `reserved` (every second in sight is full), look again then."""

    def __init__(self, delay: float, *, reserved: bool = True):
        self.delay = delay
        self.reserved = reserved
        what = "submission slot reserved" if reserved else "no submission slot; look again"
        super().__init__(f"{what} in {delay:.1f} s")


def take_submit_slot() -> None:
    """Takes a place in the first second, from now on, that has one left
    (SLURM_SUBMIT_RATE a second); a later place raises RateLimited with the delay to
    it. The caller waits that long once and then goes ahead without asking again,
    so a burst of 800 clicks costs 800 waits, not a retry storm. The search starts
    at the first second not known to be full, so the 800th click does not probe 80."""
    now = time.time()
    first = max(int(now), cache.get(SUBMIT_FRONTIER_KEY, 0))
    for second in range(first, int(now) + MAX_SLOT_AHEAD_SECONDS):
        key = f"jobs:submits:{second}"
        expires = second - int(now) + 10
        cache.add(key, 0, timeout=expires)
        taken = cache.incr(key)
        if taken <= settings.SLURM_SUBMIT_RATE:
            if taken == settings.SLURM_SUBMIT_RATE:
                # A racing worker may set an older frontier: it only searches longer.
                cache.set(SUBMIT_FRONTIER_KEY, second + 1, timeout=expires)
            if second > int(now):
                raise RateLimited(second - now)
            return
    raise RateLimited(60.0, reserved=False)  # no place in sight: look again in a minute
