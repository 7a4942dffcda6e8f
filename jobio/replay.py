"""Replay my job, the first step: from a job's I/O (JobIO, as its Darshan log counts it)
to a small benchmark that does the same kind of I/O, bounded by the site's limits.

Only numbers leave a log: the workload is a `Workload` (jobs/engines/base.py), typed
and bounded, from which the engines build their command lines; the log's text (its
command line, its file names) never reaches a job. What decides a target's speed is
kept (request size, order, processes, a file each or one shared, many small files,
fsync, reading); the rest is said (`not_kept`), as the page says it.

A figure counts only over time enough to be one: every run of a replay is timed for
at least MIN_SECONDS. fio goes for its seconds, IOR goes through its bytes again
until they passed, and mdtest, which makes files rather than bytes, stops making them
after its seconds on a slow target and makes them again and again on a fast one, as
many times over as the site's figure for that target says it takes (`sized_for`):
within the bound of bytes and of files at once (REPLAY_MAX_BYTES, REPLAY_MAX_FILES).
A job that mostly read is replayed reading data written first, past the page cache.
"""

import math
from dataclasses import dataclass

from exercises.advisor import Access
from exercises.advisor.job_io import JobIO
from exercises.advisor.patterns import interleaved, pattern_of, reads_mostly
from jobs.engines import get_engine
from jobs.engines.base import ITERATIONS_MAX, SEGMENTS_MAX, Pattern, Target, Workload
from portal.units import GiB, KiB, MiB, iec

# The engines' own bounds (Workload): a request of 512 B to 64 MiB, 64 KiB to 64 GiB
# a process, at most 100,000 files a process.
SMALLEST_REQUEST = 512
LARGEST_REQUEST = 64 * MiB
SMALLEST_PER_PROCESS = 64 * KiB
MOST_FILES = 100_000
# A job of many small files: more files than this a process, each at most this big,
# replays as files made and removed (mdtest), or read (fio) for a job that read them.
MANY_FILES = 100
SMALL_FILE = 1 * MiB
# A run shorter than this ranks nothing: its figure is a timer's, not the storage's.
MIN_SECONDS = 3
# mdtest's files are made for this many times the replay's seconds at the site's
# figure: a figure is another workload's median (exercise 6: eight processes), and a
# replay may go faster. Over-sizing costs little: each round stops at its share of
# the seconds on a target slower than the figure.
SIZING_MARGIN = 3.0
# More rounds than this, and each round makes more files instead (within the bounds):
# a round costs mdtest a directory tree and four barriers.
ROUNDS_BEFORE_MORE_FILES = 20


class NotReplayable(ValueError):
    """A log whose I/O cannot be replayed here; the text says why, in one line."""


@dataclass(frozen=True)
class Replay:
    """What a replay runs, and how it stands to the job."""

    engine: str
    workload: Workload  # the plan; an mdtest run's own is sized_for its target
    job_bytes: int  # what the job wrote (or read, for a job that only read)
    replay_bytes: int  # once through the replay's files, over all its processes
    kept: tuple[str, ...]
    not_kept: tuple[str, ...]

    @property
    def scale(self) -> float:
        """The job's bytes per byte of the replay once through (1.0: the whole job)."""
        return self.job_bytes / self.replay_bytes


def replay_of(
    io: JobIO,
    *,
    max_bytes: int = 1 * GiB,
    max_processes: int = 8,
    seconds: int = 60,
    max_files: int = 20_000,
) -> Replay:
    """The replay of `io`, within `max_bytes`, `max_processes` and `max_files` at once;
    each timed phase for `seconds` (MIN_SECONDS at least), so a slow target costs no
    more time than a fast one. NotReplayable when the job did no file I/O the replay
    could do."""
    job_bytes = io.bytes_written or io.bytes_read
    if not job_bytes or not io.requests:
        raise NotReplayable(
            "The log records no reads or writes of files: there is nothing to replay."
        )
    seconds = max(seconds, MIN_SECONDS)
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
    reading = reads_mostly(io)
    own_files = math.ceil(io.files / max(io.nprocs, 1))  # the job's files a process
    many_small = own_files >= MANY_FILES and io.footprint_bytes / max(io.files, 1) <= SMALL_FILE
    shared = io.shared_files > 0 and io.shared_files * 2 >= io.files and processes > 1
    # Files made are mdtest's; files a job read were there before it: fio lays them out
    # and reads them, past the page cache, as it does a large file.
    engine = ("fio" if reading else "mdtest") if many_small else ("ior" if shared else "fio")
    if many_small and pattern == Pattern.RANDOM:
        not_kept.append("scattered requests within each small file: each is moved whole")
        pattern = Pattern.SEQUENTIAL
    files = _files(own_files, processes, block, max_bytes, max_files, not_kept) if many_small else 1
    shared = shared and not many_small  # small files are each process's own
    read_only = engine == "fio" and not io.bytes_written
    reads_back = bool(io.bytes_read and io.bytes_written) or (reading and engine == "ior")
    if engine == "mdtest":
        reads_back = False  # mdtest reads back every file it makes, and times it apart
    _said_of_reads(io, engine, read_only, not_kept)

    if many_small:
        per_process = _small_files_bytes(io, files, processes, block, max_bytes)
    else:
        per_process = _bytes(io, job_bytes, processes, shared, block, max_bytes)
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
            fsync=io.syncs > 0 and not read_only,
            read_back=reads_back,
            read_only=read_only,
            # Past the page cache where the target has one, as the lab measures: the
            # storage decides, not the memory of the node the replay ran on.
            direct=engine != "mdtest",  # mdtest counts file operations, not bytes
            seconds=seconds,
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
        kept=tuple(_what_is_kept(workload, engine, seconds)),
        not_kept=tuple(not_kept),
    )


def _files(
    own: int, processes: int, block: int, max_bytes: int, max_files: int, not_kept: list[str]
) -> int:
    """The files a process makes (or reads) at once: the job's own, within the bounds
    of files at once and of bytes (a file holds one request at least)."""
    bound = max(min(MOST_FILES, max_files // processes, max_bytes // (block * processes)), 1)
    if own <= bound:
        return own
    not_kept.append(
        f"all of its {own:,} files a process at once: replayed with {bound:,}, the most a "
        f"replay keeps at once ({max_files:,} files and {iec(max_bytes)} in all), made "
        "again as often as its time needs"
    )
    return bound


def _bytes(
    io: JobIO, job_bytes: int, processes: int, shared: bool, block: int, max_bytes: int
) -> int:
    """A process's bytes: over files the size of the job's own (its file each, or its
    share of the one they share), so that scattered requests land as far apart as the
    job's did, which a disk's seeks feel, and reads go over as much data as the job's;
    within the bound."""
    per_process = max(job_bytes // processes, SMALLEST_PER_PROCESS)
    if io.footprint_bytes:
        owners = processes if shared else max(io.nprocs, 1)
        per_process = max(io.footprint_bytes // owners, SMALLEST_PER_PROCESS)
    per_process = min(per_process, max(max_bytes // processes, SMALLEST_PER_PROCESS))
    per_process = max(per_process // block, 1) * block
    if per_process < SMALLEST_PER_PROCESS:
        per_process = math.ceil(SMALLEST_PER_PROCESS / block) * block
    return per_process


def _small_files_bytes(io: JobIO, files: int, processes: int, block: int, max_bytes: int) -> int:
    """A process's bytes in `files` files of the job's own size (whole requests, one at
    least), within the bound of bytes, and at least the engines' smallest share."""
    size = (io.footprint_bytes // max(io.files, 1)) // block * block
    size = min(max(size, block), max(max_bytes // (processes * files) // block * block, block))
    per_process = size * files
    if per_process < SMALLEST_PER_PROCESS:  # a few tiny files: more of each
        size = math.ceil(SMALLEST_PER_PROCESS / files / block) * block
        per_process = size * files
    return per_process


def _said_of_reads(io: JobIO, engine: str, read_only: bool, not_kept: list[str]) -> None:
    if not io.bytes_read:
        return
    if read_only:
        not_kept.append(
            "data that was there before the job: the replay lays it out before its clock "
            "starts, then reads it past the page cache (on a target in memory, memory is "
            "the storage)"
        )
    elif engine == "mdtest":
        not_kept.append(
            "reading the files as the job did: mdtest reads each file right after making "
            "them all, where a target's cache may still hold it"
        )
    elif not io.bytes_written:
        not_kept.append(
            "data that was there before the job: the replay writes it first, untimed in "
            "your job's figure, then reads it past the page cache"
        )
    else:
        not_kept.append("reading data another job wrote: the replay reads back its own")


def sized_for(
    plan: Workload,
    engine: str,
    files_per_second: float | None,
    *,
    max_files: int = 20_000,
    max_bytes: int = 1 * GiB,
) -> Workload:
    """The plan as one target runs it. fio's and IOR's runs last their seconds by
    themselves; mdtest's files are made again (its rounds, mdtest's iterations), and
    made more of at once where the rounds would be many (within `max_files` and
    `max_bytes` at once), until at the target's `files_per_second` (the site's figure,
    all processes) they take SIZING_MARGIN times the replay's seconds; each round
    stops at its share of the seconds on a target slower than the figure, so a run
    lasts about its seconds there. Without a figure, once, stopped at its seconds."""
    if engine != "mdtest" or not files_per_second or not plan.seconds:
        return plan
    processes, per_process = plan.processes, plan.files_per_process
    wanted = SIZING_MARGIN * plan.seconds * files_per_second  # files made in all
    if wanted <= per_process * processes:
        return plan
    file_size = plan.size_per_process // per_process
    if wanted > ROUNDS_BEFORE_MORE_FILES * per_process * processes:
        most = min(MOST_FILES, max_files // processes, max_bytes // (file_size * processes))
        enough = math.ceil(wanted / ROUNDS_BEFORE_MORE_FILES / processes)
        per_process = max(per_process, min(most, enough))
    rounds = min(math.ceil(wanted / (per_process * processes)), ITERATIONS_MAX)
    return Workload.model_validate(
        plan.model_dump()
        | {
            "files_per_process": per_process,
            "size_per_process": per_process * file_size,
            "iterations": rounds,
            "seconds": max(1, -(-plan.seconds // rounds)),
        }
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


def _what_is_kept(workload: Workload, engine: str, seconds: int) -> list[str]:
    said = [
        f"requests of {iec(workload.block_size)}",
        "in the job's order" if workload.pattern == Pattern.SEQUENTIAL else "at scattered offsets",
        f"{workload.processes} process{'es' if workload.processes > 1 else ''}",
    ]
    if workload.files_per_process > 1:
        said.append(f"{workload.files_per_process:,} small files a process")
    elif workload.processes > 1:
        said.append("a file each" if workload.file_per_process else "one file they share")
    if workload.segments > 1:
        said.append("in pieces that take turns with the other processes'")
    if workload.fsync:
        said.append("fsync before the clock stops")
    if workload.read_only:
        said.append("reading files laid out before the clock starts, past the page cache")
    elif workload.read_back:
        said.append("reading the data back, past the page cache, timed apart from the writes")
    if engine == "mdtest":
        said.append(
            f"making files for at most {seconds} s on each target, and again as often as "
            "a fast target needs to take that long"
        )
    elif engine == "ior":
        said.append(f"each phase for {seconds} s at least, through its files again")
    else:
        said.append(f"each phase for {seconds} s, over files of the job's size or the bound's")
    return said
