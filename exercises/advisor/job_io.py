"""A job's I/O, in the few figures the advisor needs: what its advice is made of.

JobIO is plain data (JSON in, JSON out) so a check can keep it and the advisor
can read it without PyDarshan. Darshan logs become one in jobio/darshan.py, the only
place that opens a log, in a sandbox (jobio/sandbox.py).
"""

import math
from dataclasses import asdict, dataclass, field, fields
from typing import Any

# POSIX_SIZE_{READ,WRITE}_* bins, in Darshan's order, with the bytes each starts at.
SIZE_BINS: tuple[tuple[str, str, int], ...] = (
    ("0_100", "0–100 B", 0),
    ("100_1K", "100 B–1 KiB", 100),
    ("1K_10K", "1–10 KiB", 1024),
    ("10K_100K", "10–100 KiB", 10 * 1024),
    ("100K_1M", "100 KiB–1 MiB", 100 * 1024),
    ("1M_4M", "1–4 MiB", 2**20),
    ("4M_10M", "4–10 MiB", 4 * 2**20),
    ("10M_100M", "10–100 MiB", 10 * 2**20),
    ("100M_1G", "100 MiB–1 GiB", 100 * 2**20),
    ("1G_PLUS", "1 GiB and more", 2**30),
)


@dataclass(frozen=True)
class JobIO:
    job_id: int
    uid: int
    nprocs: int
    run_time_s: float
    exe: str  # the command line, as the log has it (shown escaped, never run)
    bytes_written: int
    bytes_read: int
    writes: int
    reads: int
    # Requests per size bin of SIZE_BINS, in its order.
    write_sizes: tuple[int, ...]
    read_sizes: tuple[int, ...]
    sequential_requests: int  # at a higher offset than the last one (POSIX_SEQ_*)
    consecutive_requests: int  # right after the last one (POSIX_CONSEC_*)
    # Each rank's first request to a file follows none, so Darshan counts it neither
    # sequential nor not: one per file and rank that read or wrote.
    first_requests: int
    files: int  # files the job read or wrote (stdin/stdout/stderr left out)
    shared_files: int  # files every rank opened, recorded once as rank -1
    footprint_bytes: int  # sum over files of the highest byte written or read, + 1
    meta_time_s: float  # time in open/close/stat/seek/fsync..., summed over ranks
    io_time_s: float  # time in read and write, summed over ranks
    # The most common request sizes ("typical"), from POSIX_ACCESS1..4.
    common_sizes: tuple[tuple[int, int], ...] = field(default=())
    # Darshan ran out of room for records (its partial_flag): the job opened more files
    # than the log holds, so every count here is a lower bound.
    partial: bool = False
    # fsync and fdatasync calls: none, and the job's last writes may still have been in
    # the page cache when it ended (exercise 4a's trap). Those kept before it: 0.
    syncs: int = 0

    @property
    def requests(self) -> int:
        return self.writes + self.reads

    @property
    def judged_requests(self) -> int:
        """Requests that follow another on the same file: those Darshan judged."""
        return max(self.requests - self.first_requests, 0)

    @property
    def sequential_share(self) -> float:
        """Of the judged requests; 1.0 when every file was written in one request."""
        n = self.judged_requests
        return min(self.sequential_requests / n, 1.0) if n else 1.0

    @property
    def consecutive_share(self) -> float:
        n = self.judged_requests
        return min(self.consecutive_requests / n, 1.0) if n else 1.0

    @property
    def meta_share(self) -> float:
        total = self.meta_time_s + self.io_time_s
        return self.meta_time_s / total if total > 0 else 0.0

    @property
    def io_time_share(self) -> float | None:
        """The share of the job's run time its processes spent in I/O and metadata:
        their summed times over nprocs × run time (at most 1); None without a run time."""
        if self.run_time_s <= 0:
            return None
        spent = (self.io_time_s + self.meta_time_s) / max(self.nprocs, 1)
        return min(spent / self.run_time_s, 1.0)

    @property
    def typical_request_bytes(self) -> int:
        """The size of most requests: Darshan's most common access size, else the
        mean of the job's requests."""
        if self.common_sizes:
            return max(self.common_sizes, key=lambda sc: (sc[1], sc[0]))[0]
        if self.requests:
            return (self.bytes_written + self.bytes_read) // self.requests
        return 0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "JobIO":
        """A JobIO from its JSON, checked: it comes from a child that read a log
        anyone may have crafted. A count is a whole number from 0 to 2**63, a time a
        finite number of seconds from 0 (no Infinity or NaN: Darshan records neither,
        so one means a damaged log); else ValueError (or TypeError, KeyError)."""
        if not isinstance(data, dict):
            raise TypeError("the I/O is not an object")
        names = {f.name for f in fields(cls)}
        if extra := set(data) - names:
            raise ValueError(f"unknown fields {sorted(extra)[:3]}")
        checked: dict[str, Any] = {}
        for name in COUNTS:
            checked[name] = _count(data[name], name)
        for name in TIMES:
            value = data[name]
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise TypeError(f"{name} is not a number")
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"{name} is {value}")
            checked[name] = float(value)
        if not isinstance(data["exe"], str):
            raise TypeError("exe is not text")
        checked["exe"] = data["exe"][:500]
        checked["syncs"] = _count(data.get("syncs", 0), "syncs")
        partial = data.get("partial", False)
        if not isinstance(partial, bool):
            raise TypeError("partial is not true or false")
        checked["partial"] = partial
        for name in ("write_sizes", "read_sizes"):
            sizes = data[name]
            if not isinstance(sizes, list | tuple) or len(sizes) != len(SIZE_BINS):
                raise ValueError(f"{name} has not {len(SIZE_BINS)} bins")
            checked[name] = tuple(_count(n, name) for n in sizes)
        common = data.get("common_sizes", ())
        if not isinstance(common, list | tuple) or len(common) > 4:
            raise ValueError("common_sizes is not up to 4 pairs")
        checked["common_sizes"] = tuple(
            (_count(pair[0], "common_sizes"), _count(pair[1], "common_sizes")) for pair in common
        )
        return cls(**checked)


COUNTS = (
    "job_id", "uid", "nprocs", "bytes_written", "bytes_read", "writes", "reads",
    "sequential_requests", "consecutive_requests", "first_requests", "files",
    "shared_files", "footprint_bytes",
)  # fmt: skip
TIMES = ("run_time_s", "meta_time_s", "io_time_s")


def _count(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} is not a whole number")
    if not 0 <= value < 2**63:
        raise ValueError(f"{name} is {value}")
    return value
