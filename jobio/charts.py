"""A job's I/O as the check page draws it (static/js/jobio.js) and tabulates it."""

from exercises.advisor.job_io import SIZE_BINS, JobIO
from portal.units import MiB


def access_counts(io: JobIO) -> list[tuple[str, int]]:
    """The judged requests split three ways (each file's first request follows none)."""
    consecutive = min(io.consecutive_requests, io.judged_requests)
    forward = max(min(io.sequential_requests, io.judged_requests) - consecutive, 0)
    other = max(io.judged_requests - consecutive - forward, 0)
    return [
        ("Consecutive", consecutive),  # right after the previous request
        ("Forward, with a gap", forward),  # sequential, not consecutive
        ("Scattered", other),  # backwards or anywhere: random
    ]


def size_rows(io: JobIO) -> list[tuple[str, int, int]]:
    """(size range, writes, reads) for the bins the job used."""
    rows = [
        (label, w, r)
        for (_, label, _), w, r in zip(SIZE_BINS, io.write_sizes, io.read_sizes, strict=True)
    ]
    return [row for row in rows if row[1] or row[2]]


def chart_data(io: JobIO) -> dict:
    access = access_counts(io)
    return {
        "sizes": {
            "labels": [label for _, label, _ in SIZE_BINS],
            "writes": list(io.write_sizes),
            "reads": list(io.read_sizes),
        },
        # None when each file took one request: there is no order to draw.
        "access": {"labels": [a for a, _ in access], "values": [n for _, n in access]}
        if io.judged_requests
        else None,
        "bytes": {
            "labels": ["Written", "Read"],
            "values": [round(io.bytes_written / MiB, 1), round(io.bytes_read / MiB, 1)],
        },
    }
