"""What kind of I/O a job did, read off its counters (exercises/advisor/job_io.py): in
order or scattered, few large files or many small ones, small pieces of a shared file
taking turns, a large shared file streamed, mostly reads. Check my job's advice and the
replay (jobio/replay.py) read a job the same way."""

from exercises.advisor.job_io import JobIO
from exercises.advisor.question import Access, FileShape
from portal.units import KiB, MiB

# Sequential: most requests start where the last one ended (consecutive), or at
# least further on (sequential: a strided pattern). Random: neither. Random 4 KiB
# writes that touch each block once still go "forward" about half the time, so the
# sequential share alone does not tell streaming from scattering.
SEQUENTIAL_CONSEC = 0.7
SEQUENTIAL_SEQ = 0.9
RANDOM_SEQ = 0.7
RANDOM_CONSEC = 0.3
# Many small files: more than this many files, averaging under SMALL_FILE bytes, or a
# job that spends more time opening and closing than reading and writing.
MANY_FILES = 100
SMALL_FILE = 4 * MiB
META_HEAVY = 0.5
# Small interleaved pieces of one shared file: several ranks, requests under this
# size, going forward but seldom right after the rank's last one (its next piece lies
# past the other ranks'). Collective buffering gathers exactly these.
INTERLEAVED_MAX = 1 * MiB
# One large shared file: several ranks writing at least this much into the job's
# shared files, in requests of at least STREAM_MIN (not 8a's interleaved pieces). At
# Lustre's 1 MiB stripe size that is 128 stripes (32 of GlusterFS's 4 MiB pieces):
# enough to keep every server busy, if the file is spread over them.
LARGE_SHARED = 128 * MiB
STREAM_MIN = 64 * KiB


def pattern_of(p: JobIO) -> Access:
    if not p.judged_requests:  # no I/O, or each file in one request: nothing scattered
        return Access.SEQUENTIAL
    if p.consecutive_share >= SEQUENTIAL_CONSEC or p.sequential_share >= SEQUENTIAL_SEQ:
        return Access.SEQUENTIAL
    if p.sequential_share < RANDOM_SEQ and p.consecutive_share < RANDOM_CONSEC:
        return Access.RANDOM
    return Access.MIXED


def file_shape_of(p: JobIO) -> FileShape:
    many = p.files > MANY_FILES and p.footprint_bytes / p.files < SMALL_FILE
    metadata_bound = p.files > 10 and p.meta_share >= META_HEAVY
    return FileShape.MANY_SMALL if many or metadata_bound else FileShape.FEW_LARGE


def interleaved(p: JobIO) -> bool:
    """Whether the job's ranks wrote small pieces of a shared file in turns, each
    piece a request of its own (exercise 8a's pattern)."""
    return (
        p.shared_files > 0
        and p.nprocs > 1
        and p.writes > p.nprocs
        and 0 < p.typical_request_bytes < INTERLEAVED_MAX
        and p.sequential_share >= SEQUENTIAL_SEQ
        and p.consecutive_share < SEQUENTIAL_CONSEC
    )


def large_shared(p: JobIO) -> bool:
    """Whether the job's ranks streamed a large shared file (exercise 10a's pattern),
    the file that one server limits unless it is striped."""
    return (
        p.shared_files > 0
        and p.nprocs > 1
        and p.bytes_written >= LARGE_SHARED * p.shared_files
        and p.typical_request_bytes >= STREAM_MIN
        and not interleaved(p)
    )


def reads_mostly(p: JobIO) -> bool:
    return p.bytes_read > p.bytes_written
