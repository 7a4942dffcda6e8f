"""Sizes and throughput as people read them: base-2 units (KiB, MiB) for sizes
and MiB/s, with MB/s (base 10) beside it where vendors' figures are compared.
Throughput is stored in bytes/s everywhere; these are the only conversions."""

KiB = 2**10
MiB = 2**20
GiB = 2**30
MB = 10**6


def mib(bytes_per_s: float | None) -> float | None:
    """bytes/s -> MiB/s; None stays None (no figure)."""
    return None if bytes_per_s is None else bytes_per_s / MiB


def mb(bytes_per_s: float | None) -> float | None:
    """bytes/s -> MB/s; None stays None (no figure)."""
    return None if bytes_per_s is None else bytes_per_s / MB


def iec(size: float) -> str:
    """1048576 -> '1 MiB', 4096 -> '4 KiB', 1536 -> '1.5 KiB'."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        # 1023.9 MiB would print as "1.02e+03 MiB": three figures that round to 1,000
        # or more are the next unit's 1.
        if unit == "TiB" and abs(size) >= 999.5:
            return f"{size:,.0f} TiB"
        if abs(size) < 999.5 or unit == "TiB":
            return f"{size:.3g} {unit}" if unit != "B" else f"{int(size)} B"
        if abs(size) < 1024 and unit == "B":
            return f"{int(size)} B"
        size /= 1024
    raise AssertionError("unreachable")


def ratio_as_shown(fast: float, slow: float) -> float | None:
    """fast / slow, of the two MiB/s as the pages show them (0.1 MiB/s): the ratio a
    reader works out from the figures printed beside it, the same on every page. A
    figure that shows as 0.0 leaves nothing to work out from: then the figures as
    measured. None without a slow figure."""
    if not slow:
        return None
    shown_fast, shown_slow = round(fast, 1), round(slow, 1)
    return shown_fast / shown_slow if shown_fast and shown_slow else fast / slow


def times(ratio: float | None) -> str:
    """'7.6×', '53×': one decimal below 10, none above; '–' without a ratio."""
    if ratio is None:
        return "–"
    return f"{ratio:,.1f}×" if ratio < 10 else f"{ratio:,.0f}×"


def spoken_seconds(seconds: float) -> str:
    """A time as people say it: "20 ms", "0.4 s", "12 s", "4 min", "2 h 5 min", "3 days"."""
    if seconds < 0.1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 90:
        return f"{seconds:.0f} s"
    minutes = seconds / 60
    if minutes < 90:
        return f"{minutes:.0f} min"
    hours, rest = divmod(round(minutes), 60)
    if hours < 48:
        return f"{hours} h {rest} min" if rest and hours < 10 else f"{hours} h"
    return f"{hours / 24:.0f} days"
