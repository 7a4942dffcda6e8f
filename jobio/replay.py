"""Replay my job, the first step: from a job's I/O (JobIO, as its Darshan log counts it)
to a small benchmark that does the same kind of I/O, bounded by the site's limits.

Only numbers leave a log: the workload is a `Workload` (jobs/engines/base.py), typed
and bounded, from which the engines build their command lines; the log's text (its
command line, its file names) never reaches a job. What decides a target's speed is
kept (request size, order, processes, a file each or one shared, many small files,
fsync, reading back); the rest is said (`not_kept`), as the page will say it.
"""

import math
from dataclasses import dataclass

from exercises.advisor import Access
from exercises.advisor.job import interleaved, pattern_of
from exercises.advisor.job_io import JobIO
from jobs.engines import get_engine
from jobs.engines.base import SEGMENTS_MAX, Pattern, Target, Workload
from portal.units import GiB, KiB, MiB, iec

# The engines' own bounds (Workload): a request of 512 B to 64 MiB, 64 KiB to 64 GiB
# a process, at most 100,000 files a process.
SMALLEST_REQUEST = 512
LARGEST_REQUEST = 64 * MiB
SMALLEST_PER_PROCESS = 64 * KiB
MOST_FILES = 100_000
# A job of many small files: more files than this a process, each at most this big,
# replays as mdtest's create-write-read-remove of that many files.
MANY_FILES = 100
SMALL_FILE = 1 * MiB


class NotReplayable(ValueError):
    """A log whose I/O cannot be replayed here; the text says why, in one line."""


@dataclass(frozen=True)
class Replay:
    """What a replay runs, and how it stands to the job."""

    engine: str
    workload: Workload
    job_bytes: int  # what the job wrote (or read, for a job that only read)
    replay_bytes: int  # what the replay writes, over all its processes
    kept: tuple[str, ...]
    not_kept: tuple[str, ...]

    @property
    def scale(self) -> float:
        """The job's bytes per byte of the replay (1.0: the whole job)."""
        return self.job_bytes / self.replay_bytes


def replay_of(
    io: JobIO, *, max_bytes: int = 1 * GiB, max_processes: int = 8, seconds: int = 60
) -> Replay:
    """The replay of `io`, within `max_bytes` and `max_processes`; fio's writes go on
    for `seconds` instead of once through the bytes, so a slow target costs no more
    time than a fast one. NotReplayable when the job did no file I/O the replay could
    do."""
    job_bytes = io.bytes_written or io.bytes_read
    if not job_bytes or not io.requests:
        raise NotReplayable(
            "The log records no reads or writes of files: there is nothing to replay."
        )
    not_kept = [
        "the time the job spent computing between its requests",
        "what an I/O library (HDF5, NetCDF, MPI-IO) adds in metadata of its own",
    ]
    if io.partial:
        not_kept.append(
            "what Darshan did not record: the log is partial (Darshan ran out of room), so "
            "the job did at least this much I/O"
        )
    processes = min(max(io.nprocs, 1), max_processes)
    if processes < io.nprocs:
        not_kept.append(f"all of the job's {io.nprocs:,} processes: replayed by {processes}")
    block = _request_size(io, not_kept)
    access = pattern_of(io)
    pattern = Pattern.RANDOM if access == Access.RANDOM else Pattern.SEQUENTIAL
    if access == Access.MIXED:
        not_kept.append("the mix of in-order and scattered requests: replayed in order")
    own_files = math.ceil(io.files / max(io.nprocs, 1))  # the job's files a process
    files = min(max(own_files, 1), MOST_FILES)
    shared = io.shared_files > 0 and io.shared_files * 2 >= io.files and processes > 1
    many_small = files >= MANY_FILES and io.footprint_bytes / max(io.files, 1) <= SMALL_FILE
    engine = "mdtest" if many_small else ("ior" if shared else "fio")
    if many_small and pattern == Pattern.RANDOM:
        not_kept.append("scattered requests within each small file: each is written whole")
        pattern = Pattern.SEQUENTIAL
    if not many_small:
        files = 1
    elif files * block * processes > max_bytes:
        bounded = max(max_bytes // (block * processes), 1)
        not_kept.append(f"all of its {own_files:,} files a process: replayed with {bounded:,}")
        files = bounded
    shared = shared and not many_small  # mdtest gives each process files of its own
    reads_back = io.bytes_read > 0 and io.bytes_written > 0 and engine != "mdtest"
    if io.bytes_read and not io.bytes_written:
        not_kept.append("reading data that was there before the job: replayed as writing it")
    elif io.bytes_read:
        not_kept.append("reading data another job wrote: the replay reads back its own")

    per_process = max(job_bytes // processes, SMALLEST_PER_PROCESS)
    # fio writes for `seconds` (over its files again and again, as the lab's timed
    # exercises do): a slow target then costs no more time than a fast one, and the
    # figure is a rate, which the job's bytes are divided by. IOR and mdtest, and a
    # replay that reads back, go once through their bytes.
    time_based = engine == "fio" and not reads_back
    if time_based and io.footprint_bytes:
        # Over files the size of the job's own (a process's share of them): scattered
        # requests then land as far apart as the job's did, which a disk's seeks feel.
        per_process = max(io.footprint_bytes // max(io.nprocs, 1), SMALLEST_PER_PROCESS)
    per_process = min(per_process, max(max_bytes // processes, SMALLEST_PER_PROCESS))
    unit = block * files
    per_process = max(per_process // unit, 1) * unit
    if per_process < SMALLEST_PER_PROCESS:
        per_process = math.ceil(SMALLEST_PER_PROCESS / unit) * unit
    # Ranks that wrote a shared file in small pieces taking turns (exercise 8a) replay
    # in the same turns: every piece a request of its own, as the job's were, not each
    # rank's share in one stretch, which a filesystem gathers into large requests.
    segments = 1
    if engine == "ior" and shared and interleaved(io):
        segments = min(per_process // block, SEGMENTS_MAX)
        per_process = segments * block
    try:
        workload = Workload(
            pattern=pattern,
            block_size=block,
            processes=processes,
            size_per_process=per_process,
            files_per_process=files,
            file_per_process=not shared,
            fsync=io.syncs > 0,
            read_back=reads_back,
            # Past the page cache where the target has one, as the lab measures: the
            # storage decides, not the memory of the node the replay ran on.
            direct=engine != "mdtest",  # mdtest counts file operations, not bytes
            seconds=seconds if time_based else None,
            segments=segments,
        )
        # The engine's own rules (e.g. IOR writes no many small files), as an exercise's.
        get_engine(engine).command(workload, Target(directory="/replay"))
    except ValueError as e:  # pydantic's ValidationError is one
        reason = str(e).splitlines()[-1][:200]
        raise NotReplayable(f"This job's I/O cannot be replayed here: {reason}") from None
    return Replay(
        engine=engine,
        workload=workload,
        job_bytes=job_bytes,
        replay_bytes=per_process * processes,
        kept=tuple(_what_is_kept(workload, engine, time_based, seconds)),
        not_kept=tuple(not_kept),
    )


def _request_size(io: JobIO, not_kept: list[str]) -> int:
    """The job's typical request, as a whole number of 512-byte sectors the engines take."""
    typical = io.typical_request_bytes
    block = min(max(typical, SMALLEST_REQUEST), LARGEST_REQUEST)
    block -= block % SMALLEST_REQUEST
    if typical < SMALLEST_REQUEST:
        not_kept.append(f"requests of {iec(typical)}: replayed as {iec(SMALLEST_REQUEST)}")
    elif typical > LARGEST_REQUEST:
        not_kept.append(f"requests of {iec(typical)}: replayed as {iec(LARGEST_REQUEST)}")
    return block


def _what_is_kept(workload: Workload, engine: str, time_based: bool, seconds: int) -> list[str]:
    said = [
        f"requests of {iec(workload.block_size)}",
        "in the job's order" if workload.pattern == Pattern.SEQUENTIAL else "at scattered offsets",
        f"{workload.processes} process{'es' if workload.processes > 1 else ''}",
    ]
    if engine == "mdtest":
        said.append(f"{workload.files_per_process:,} small files a process")
    elif workload.processes > 1:
        said.append("a file each" if workload.file_per_process else "one file they share")
    if workload.segments > 1:
        said.append("in pieces that take turns with the other processes'")
    if workload.fsync:
        said.append("fsync before the clock stops")
    if workload.read_back:
        said.append("reading the data back")
    if time_based:
        said.append(f"for {seconds} s, over files of the job's size or the bound's")
    return said
