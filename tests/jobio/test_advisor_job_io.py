"""The advisor's rules for a job's real I/O (exercises/advisor/job.py), on a table of
jobs' I/O and VSC-3's facts and published figures (as tests/exercises/advisor/test_advisor.py
has them). Plain pytest, no database, no log: each job's I/O is written out here."""

from dataclasses import dataclass, replace

import pytest

from exercises.advisor import Access, Advice, FileShape, Recommendation
from exercises.advisor.job import advise_job, question_for, speedup
from exercises.advisor.job_io import JobIO
from exercises.advisor.patterns import pattern_of
from exercises.advisor.question import ExerciseShape
from tests.published import VSC3, facts_of, in_mib_s, profile

KiB, MiB, GiB = 2**10, 2**20, 2**30
SITE = profile("vsc3")
SHAPES = [
    ExerciseShape(
        e["key"],
        e["title"],
        e["pattern"],
        e["block_size"],
        e["processes"],
        e.get("files_per_process", 1),
        e.get("fsync", True),
    )
    for e in SITE["exercises"]
    if e.get("engine", "fio") != "mdtest"
]
REFS = {
    (r["exercise"], r["target"]): in_mib_s(r) for r in SITE["references"] if r["metric"] == "write"
}


def figures_for(key: str, reading: bool) -> dict[str, tuple[float, str]]:
    """VSC-3 published write figures only: none of reads."""
    if reading:
        return {}
    return {t: (v, "published") for (e, t), v in REFS.items() if e == key}


def io(
    *,
    size: int,
    requests: int,
    procs: int = 1,
    files: int = 1,
    seq: float,
    consec: float,
    footprint: int | None = None,
    meta: float = 0.01,
    reads: bool = False,
    run_time: float = 60.0,
    io_time: float = 10.0,
    partial: bool = False,
) -> JobIO:
    """A job of `requests` of `size` bytes each, `seq`/`consec` of them in order."""
    judged = max(requests - files * procs, 0)
    bins = [0] * 10
    bins[sum(size >= edge for edge in (100, KiB, 10 * KiB, 100 * KiB, MiB, 4 * MiB)) - 0] = requests
    moved = size * requests
    return JobIO(
        job_id=1,
        uid=1000,
        nprocs=procs,
        run_time_s=run_time,
        exe="app",
        bytes_written=0 if reads else moved,
        bytes_read=moved if reads else 0,
        writes=0 if reads else requests,
        reads=requests if reads else 0,
        write_sizes=tuple([0] * 10 if reads else bins),
        read_sizes=tuple(bins if reads else [0] * 10),
        sequential_requests=int(seq * judged),
        consecutive_requests=int(consec * judged),
        first_requests=files * procs if files >= procs else procs,
        files=files,
        shared_files=0,
        footprint_bytes=footprint if footprint is not None else moved,
        meta_time_s=meta * io_time,
        io_time_s=(1 - meta) * io_time,
        common_sizes=((size, requests),),
        partial=partial,
    )


@dataclass(frozen=True)
class Row:
    io: JobIO
    pattern: Access
    shape: FileShape
    resembles: str
    first: set[str]  # acceptable first choices
    never_first: frozenset[str] = frozenset()


PARALLEL_FS = {"global", "binfl"}
TABLE = {
    "random 4 KiB writes to one 64 MiB file": Row(
        io(size=4 * KiB, requests=16384, seq=0.5, consec=0.0),
        Access.RANDOM,
        FileShape.FEW_LARGE,
        "2a",
        {"tmp"},
    ),
    "random 4 KiB writes by 8 processes, a file each": Row(
        io(size=4 * KiB, requests=8 * 65536, procs=8, files=8, seq=0.5, consec=0.01),
        Access.RANDOM,
        FileShape.FEW_LARGE,
        "2b",
        {"tmp"},
    ),
    "a 2 GiB sequential write in 1 MiB blocks": Row(
        io(size=MiB, requests=2048, seq=1.0, consec=1.0),
        Access.SEQUENTIAL,
        FileShape.FEW_LARGE,
        "1a",
        PARALLEL_FS,
    ),
    "8 processes streaming 1 GiB each": Row(
        io(size=MiB, requests=8192, procs=8, files=8, seq=1.0, consec=1.0),
        Access.SEQUENTIAL,
        FileShape.FEW_LARGE,
        "1b",
        PARALLEL_FS,
    ),
    "32,768 files of 16 KiB from 8 processes": Row(
        io(size=16 * KiB, requests=32768, procs=8, files=32768, seq=1.0, consec=1.0, meta=0.6),
        Access.SEQUENTIAL,
        FileShape.MANY_SMALL,
        "3",
        {"tmp", "binfs"},
        frozenset(PARALLEL_FS),
    ),
    "random 4 KiB writes to a 100 GiB file: too big for memory": Row(
        io(size=4 * KiB, requests=10**6, seq=0.5, consec=0.0, footprint=100 * GiB),
        Access.RANDOM,
        FileShape.FEW_LARGE,
        "2a",
        {"binfs", "home", "binfl"},
        frozenset({"tmp"}),
    ),
    # The streaming job: 256 MiB in 1 MiB blocks by a job that ran 0.76 s, all
    # of it I/O. Few bytes, but I/O is all it does: never "little I/O", never $HOME.
    "256 MiB streamed by a job that is all I/O": Row(
        io(size=MiB, requests=256, seq=1.0, consec=1.0, run_time=0.76, io_time=0.76),
        Access.SEQUENTIAL,
        FileShape.FEW_LARGE,
        "1a",
        PARALLEL_FS,
        frozenset({"home"}),
    ),
    # The same bytes over ten minutes of computing: the choice of filesystem hardly
    # matters, and the site keeps such files on $HOME.
    "256 MiB streamed by a job that mostly computes": Row(
        io(size=MiB, requests=256, seq=1.0, consec=1.0, run_time=600, io_time=0.76),
        Access.SEQUENTIAL,
        FileShape.FEW_LARGE,
        "1a",
        {"home"},
    ),
    "random 4 KiB reads of a 64 MiB input": Row(
        io(size=4 * KiB, requests=16384, seq=0.5, consec=0.0, reads=True),
        Access.RANDOM,
        FileShape.FEW_LARGE,
        "2a",
        {"tmp"},
    ),
    # Written in scattered order, but what costs is the files: judged by their number
    # and the time in metadata, not by the order of the requests.
    "2,000 files of 16 KiB written out of order, most time in metadata": Row(
        io(size=16 * KiB, requests=2000, files=2000, seq=0.4, consec=0.0, meta=0.7),
        Access.SEQUENTIAL,
        FileShape.MANY_SMALL,
        "3",
        {"tmp", "binfs"},
        frozenset(PARALLEL_FS),
    ),
    # A log Darshan could not hold whole: advised on what it recorded, and flagged.
    "a partial log of 1,024 files of 16 KiB": Row(
        io(size=16 * KiB, requests=1024, files=1024, seq=1.0, consec=1.0, meta=0.6, partial=True),
        Access.SEQUENTIAL,
        FileShape.MANY_SMALL,
        "3",
        {"tmp", "binfs"},
        frozenset(PARALLEL_FS),
    ),
    "strided 64 KiB reads, half in order": Row(
        io(size=64 * KiB, requests=50000, seq=0.8, consec=0.5, reads=True),
        Access.MIXED,
        FileShape.FEW_LARGE,
        "1a",
        {"tmp", "binfs", "global", "binfl", "home"},
    ),
}


@pytest.fixture(params=TABLE.items(), ids=TABLE.keys())
def row(request) -> Row:
    return request.param[1]


def test_each_jobs_io_gets_its_pattern_shape_and_exercise(row: Row) -> None:
    question = question_for(row.io, SITE["profile"]["node_memory_gib"])
    job = advise_job(row.io, VSC3, 64, SHAPES, figures_for)
    assert (question.access, question.file_shape) == (row.pattern, row.shape)
    assert job.resembles and job.resembles.key == row.resembles
    assert job.likeness.startswith(f"like {row.resembles}: ")


def test_each_jobs_io_gets_the_expected_first_target(row: Row) -> None:
    job = advise_job(row.io, VSC3, 64, SHAPES, figures_for)
    assert job.ranking[0] in row.first, job.advice.plan
    assert not row.never_first & {job.ranking[0]}
    assert sorted(job.ranking) == sorted(t.key for t in VSC3)


def test_random_writes_that_fit_in_memory_are_staged_through_tmpdir_with_the_figures() -> None:
    job = advise_job(
        TABLE["random 4 KiB writes to one 64 MiB file"].io, VSC3, 64, SHAPES, figures_for
    )
    # It writes and reads nothing: there is no input to stage in.
    assert job.advice.plan.startswith("Write in $TMPDIR while the job runs")
    assert "copy the results back to" in job.advice.plan
    assert (
        job.likeness == "like 2a: 16,384 writes of 4 KiB at random offsets, one process, one file"
    )
    # Against the site's usual place for job data, by 2a's published figures.
    assert job.speedup is not None and job.speedup.baseline_key == "global"
    assert job.speedup.text == (
        "Expect $TMPDIR to be about 25× faster than $GLOBAL for this job: 1,428.4 MiB/s "
        "against 56.1 MiB/s in exercise 2a (published)."
    )
    assert job.recommended == ["tmp", "global"]


def test_a_first_choice_the_figures_call_slower_is_said_with_why_it_comes_first() -> None:
    """The recommended target is never "about 4.7× slower than" the other alone: the
    sentence says the other is faster by the figures, and why the ranking puts it
    second (here: it does not keep results past the job)."""
    stream = TABLE["a 2 GiB sequential write in 1 MiB blocks"].io
    question = question_for(stream, 24)
    ranking = (
        Recommendation("global", "$GLOBAL", 1.0, ("It keeps results.",), True),
        Recommendation("scratch", "$SCRATCH", 0.5, ("Purged.",), True, keeps_results=False),
    )
    figures = {"global": (200.0, "calibration round 4"), "scratch": (940.0, "round 4")}
    one_a = next(e for e in SHAPES if e.key == "1a")

    found = speedup(Advice(ranking, "plan"), DEV, question, figures, one_a)

    assert found.trade_off and found.baseline_key == "scratch"
    assert "slower than" not in found.text
    assert found.text == (
        "$SCRATCH is about 4.7× faster than $GLOBAL for this job by the figures: 940.0 MiB/s "
        "against 200.0 MiB/s in exercise 1a (calibration round 4). $GLOBAL comes first all "
        "the same: $SCRATCH does not keep what the job writes past it, and copying the "
        "results to a target that does is counted in its time."
    )
    # A target that does not fit says its own reason.
    blocked = (ranking[0], replace(ranking[1], fits=False, reasons=("The quota is 4 GiB.",)))
    found = speedup(Advice(blocked, "plan"), DEV, question, figures, one_a)
    assert found.text.endswith("$GLOBAL comes first all the same: the quota is 4 GiB.")


def test_a_large_stream_goes_straight_to_the_parallel_filesystem() -> None:
    job = advise_job(
        TABLE["a 2 GiB sequential write in 1 MiB blocks"].io, VSC3, 64, SHAPES, figures_for
    )
    assert "directly on" in job.advice.plan and "large blocks" in job.advice.plan
    assert job.speedup is not None and job.speedup.ratio > 1


def test_no_requests_read_as_sequential_and_light() -> None:
    idle = replace(
        TABLE["a 2 GiB sequential write in 1 MiB blocks"].io,
        writes=0,
        bytes_written=0,
        sequential_requests=0,
        consecutive_requests=0,
        first_requests=0,
        footprint_bytes=1,
        common_sizes=(),
        io_time_s=0.0,
        meta_time_s=0.0,
    )
    assert pattern_of(idle) is Access.SEQUENTIAL
    assert advise_job(idle, VSC3, 64, SHAPES, figures_for).ranking[0] == "home"


def test_without_figures_there_is_no_speedup_but_still_a_ranking() -> None:
    job = advise_job(
        TABLE["random 4 KiB writes to one 64 MiB file"].io, VSC3, 64, SHAPES, lambda k, r: {}
    )
    assert job.speedup is None and job.ranking[0] == "tmp"
    assert job.recommended == ["tmp"]


def test_the_ranking_quotes_the_same_speedup_as_the_headline() -> None:
    """One speed-up per pair on a page: the ranking's note for the best target and
    the headline set the same two figures (the resembling exercise's) side by side."""
    job = advise_job(
        TABLE["random 4 KiB writes by 8 processes, a file each"].io,
        VSC3,
        64,
        SHAPES,
        figures_for,
    )
    assert job.resembles.key == "2b" and job.speedup is not None
    tmp = next(r for r in job.advice.ranking if r.target_key == "tmp")
    ratio = f"{job.speedup.ratio:,.0f}×"
    assert f"about {ratio} faster than $GLOBAL" in job.speedup.text
    assert f"Exercise 2b: 10,551.7 MiB/s, {ratio} $GLOBAL." in tmp.reasons
    # The ratio a reader works out from the two figures the page prints.
    assert "10,551.7 MiB/s against 235.5 MiB/s" in job.speedup.text
    assert ratio == f"{10551.7 / 235.5:,.0f}×"
    # No other figure of 2b's pair anywhere on the page.
    notes = " ".join(reason for r in job.advice.ranking for reason in r.reasons)
    assert notes.count(f"{ratio} $GLOBAL") == 1


def test_a_job_that_is_all_io_is_not_told_it_does_little() -> None:
    busy = advise_job(
        TABLE["256 MiB streamed by a job that is all I/O"].io, VSC3, 64, SHAPES, figures_for
    )
    idle = advise_job(
        TABLE["256 MiB streamed by a job that mostly computes"].io,
        VSC3,
        64,
        SHAPES,
        figures_for,
    )
    assert "little I/O" not in busy.advice.plan and busy.ranking[0] != "home"
    assert idle.advice.plan.startswith("Keep these files on $HOME: the job does little I/O")


def test_a_job_reading_its_input_at_random_is_told_to_stage_it_in() -> None:
    job = advise_job(
        TABLE["random 4 KiB reads of a 64 MiB input"].io, VSC3, 64, SHAPES, figures_for
    )
    assert job.advice.plan.startswith("Stage the input into $TMPDIR")
    assert job.likeness.startswith("like 2a: 16,384 reads of 4 KiB at random offsets")


def test_a_partial_log_is_still_advised_on_and_says_so() -> None:
    row = TABLE["a partial log of 1,024 files of 16 KiB"]
    assert row.io.partial
    assert JobIO.from_json(row.io.to_json()).partial is True
    assert JobIO.from_json({**row.io.to_json(), "partial": False}).partial is False
    with pytest.raises(TypeError):
        JobIO.from_json({**row.io.to_json(), "partial": "yes"})


def test_a_reading_job_says_when_it_is_set_beside_writes() -> None:
    """VSC-3's exercises read nothing back: a random-read job is set beside 2a's
    writes, and its headline says so."""
    job = advise_job(
        TABLE["random 4 KiB reads of a 64 MiB input"].io, VSC3, 64, SHAPES, figures_for
    )
    assert job.resembles.key == "2a" and job.speedup is not None
    assert "this site has no random read figures: these are 2a's writes" in job.speedup.text
    tmp = next(r for r in job.advice.ranking if r.target_key == "tmp")
    assert any(reason.startswith("Exercise 2a (writes): ") for reason in tmp.reasons)


def test_a_reading_job_is_set_beside_an_exercise_that_reads_where_there_is_one() -> None:
    streaming_reads = io(size=MiB, requests=2048, seq=1.0, consec=1.0, reads=True)
    readers = [*SHAPES, ExerciseShape("5a", "Write and read", "sequential", MiB, 8, 1, reads=True)]

    job = advise_job(streaming_reads, VSC3, 64, readers, lambda key, reading: {})

    assert job.resembles.key == "5a"


def test_an_exercise_that_reads_on_a_site_without_read_figures_is_quoted_as_writes() -> None:
    """5a reads its data back, but the site has only 5a's write figures: the job's page
    says they are writes, never calls them reads."""
    streaming_reads = io(size=MiB, requests=2048, seq=1.0, consec=1.0, reads=True)
    readers = [*SHAPES, ExerciseShape("5a", "Write and read", "sequential", MiB, 8, 1, reads=True)]
    writes_only = {"tmp": (2000.0, "measured here"), "global": (400.0, "measured here")}

    job = advise_job(
        streaming_reads, VSC3, 64, readers, lambda key, reading: {} if reading else writes_only
    )

    assert job.resembles.key == "5a"
    notes = [reason for r in job.advice.ranking for reason in r.reasons]
    assert any(n.startswith("Exercise 5a (writes): ") for n in notes)
    assert not any("(reads)" in n for n in notes)


# --- a lab run's own log: named by the exercise it ran ----------------------------

STREAM = replace(TABLE["a 2 GiB sequential write in 1 MiB blocks"].io, syncs=1)


def test_a_run_of_an_exercise_that_writes_as_another_is_named_by_what_it_ran() -> None:
    # 7 repeats 1a's workload: its log is 1a's, and only the run knows it ran 7.
    job = advise_job(STREAM, VSC3, 64, SHAPES, figures_for, ran="7")
    assert job.resembles.key == "7" and job.likeness.startswith("like 7: ")
    # The figures it is advised on are still those a log alone gets: 1a's.
    assert job.model.key == "1a"
    alone = advise_job(STREAM, VSC3, 64, SHAPES, figures_for)
    assert alone.resembles.key == alone.model.key == "1a"
    assert job.speedup.text == alone.speedup.text


def test_a_run_of_the_page_cache_trap_is_named_so_but_advised_on_figures_with_fsync() -> None:
    unsynced = replace(STREAM, syncs=0)
    job = advise_job(unsynced, VSC3, 64, SHAPES, figures_for, ran="4a")
    assert job.resembles.key == "4a" and job.model.key == "1a"
    assert "in exercise 1a" in job.speedup.text and "4a" not in job.speedup.text
    # A user's job that never syncs is not taken for the trap.
    assert advise_job(unsynced, VSC3, 64, SHAPES, figures_for).resembles.key == "1a"


def test_a_run_whose_log_does_something_else_is_named_by_its_log() -> None:
    # A run of 4a whose program synced after all is not 4a's I/O.
    assert advise_job(STREAM, VSC3, 64, SHAPES, figures_for, ran="4a").resembles.key == "1a"
    # Nor are random writes a run of 1a's, whatever the run says it ran.
    scattered = TABLE["random 4 KiB writes to one 64 MiB file"].io
    assert advise_job(scattered, VSC3, 64, SHAPES, figures_for, ran="1a").resembles.key == "2a"


# Interleaved pieces of one shared file (exercises 8a and 8b): collective I/O.

INDEPENDENT = ExerciseShape(
    "8a", "Independent", "sequential", 16 * KiB, 8, 1, shared_file=True, engine="ior", mpi_io=True
)
COLLECTIVE = replace(INDEPENDENT, key="8b", title="Collective", collective=True)
WITH_MPI_IO = [*SHAPES, INDEPENDENT, COLLECTIVE]
# Each rank's next 16 KiB piece lies past the other 63 ranks': forward, never right after.
IN_TURNS = replace(
    io(size=16 * KiB, requests=64 * 256, procs=64, seq=1.0, consec=0.0), shared_files=1, syncs=1
)


def mpi_io_figures(key: str, reading: bool) -> dict[str, tuple[float, str]]:
    measured = {
        "8a": {"global": (40.0, "calibration round 2"), "tmp": (900.0, "calibration round 2")},
        "8b": {"global": (200.0, "calibration round 2"), "tmp": (810.0, "calibration round 2")},
    }
    return {} if reading else measured.get(key, {})


def test_ranks_writing_a_shared_file_in_turns_are_told_to_write_collectively() -> None:
    job = advise_job(IN_TURNS, VSC3, 64, WITH_MPI_IO, mpi_io_figures)

    assert job.resembles.key == "8a"  # the independent twin: what the job did
    assert "64 processes wrote pieces of 16 KiB of one shared file in turns" in job.collective
    assert "MPI_File_write_at_all" in job.collective and "a file of its own" in job.collective
    # The target where collective gained most, with both figures and their source.
    assert (
        "On $GLOBAL, collective calls wrote exercise 8a's pieces 5.0× as fast as independent "
        "ones: 200.0 MiB/s against 40.0 MiB/s (exercises 8b and 8a, calibration round 2)."
    ) in job.collective


def test_where_collective_calls_were_slower_everywhere_the_advice_promises_no_gain() -> None:
    def slower_together(key: str, reading: bool) -> dict[str, tuple[float, str]]:
        if key == "8b":  # collective at half of independent on both targets
            alone = mpi_io_figures("8a", reading)
            return {t: (v * 0.5, source) for t, (v, source) in alone.items()}
        return mpi_io_figures(key, reading)

    job = advise_job(IN_TURNS, VSC3, 64, WITH_MPI_IO, slower_together)

    assert "MPI_File_write_at_all" not in job.collective  # no call to change to
    assert "but not faster here" in job.collective
    assert "Keep your calls as they are" in job.collective
    assert "2.0× slower than independent ones: 20.0 MiB/s against 40.0 MiB/s" in job.collective
    assert "as fast as" not in job.collective


def test_without_both_figures_the_collective_advice_quotes_none() -> None:
    job = advise_job(IN_TURNS, VSC3, 64, WITH_MPI_IO, lambda key, reading: {})

    assert "MPI_File_write_at_all" in job.collective and "MiB/s" not in job.collective
    assert "MiB/s" not in advise_job(IN_TURNS, VSC3, 64, SHAPES, mpi_io_figures).collective


@pytest.mark.parametrize(
    "changes",
    [
        {"shared_files": 0},  # a file each
        {"consecutive_requests": 64 * 255},  # each rank's part in one run (5b)
        {"nprocs": 1},  # one writer
    ],
)
def test_no_collective_advice_for_writes_that_are_not_in_turns(changes: dict) -> None:
    job = advise_job(replace(IN_TURNS, **changes), VSC3, 64, WITH_MPI_IO, mpi_io_figures)

    assert job.collective == ""


def test_collective_advice_is_not_given_for_large_pieces() -> None:
    large = replace(IN_TURNS, common_sizes=((4 * MiB, 64 * 256),))

    assert advise_job(large, VSC3, 64, WITH_MPI_IO, mpi_io_figures).collective == ""


# One large shared file, streamed by many ranks (exercises 10a and 10b): striping.

ONE_SERVER = ExerciseShape(
    "10a", "One server", "sequential", MiB, 8, 1, shared_file=True, engine="ior"
)
SPREAD = replace(ONE_SERVER, key="10b", title="Spread", spread=True)
WITH_LAYOUTS = [*SHAPES, ONE_SERVER, SPREAD]
DEV = facts_of("dev")
# 64 ranks, each streaming its own 64 MiB part of one 4 GiB file in 1 MiB requests.
STREAMED = replace(
    io(size=MiB, requests=64 * 64, procs=64, seq=1.0, consec=1.0), shared_files=1, syncs=1
)


def layout_figures(key: str, reading: bool) -> dict[str, tuple[float, str]]:
    measured = {
        "10a": {"work": (110.0, "calibration round 3"), "tmp": (900.0, "calibration round 3")},
        "10b": {"work": (165.0, "calibration round 3"), "tmp": (905.0, "calibration round 3")},
    }
    return {} if reading else measured.get(key, {})


def test_ranks_streaming_one_large_shared_file_are_told_to_stripe_it_the_sites_way() -> None:
    job = advise_job(STREAMED, DEV, 24, WITH_LAYOUTS, layout_figures)

    assert job.collective == ""  # large requests, each rank's part in one run
    assert "64 processes wrote 4 GiB into one shared file" in job.striping
    # The site's way: the directory where $WORK spreads each file over its servers.
    assert "on $WORK, write it in /gluster-wide/USER" in job.striping
    # Its figures, on the target that has the spread layout ($TMPDIR has none).
    assert (
        "On $WORK, one such file spread over the servers was written 1.5× as fast as on "
        "one server: 165.0 MiB/s against 110.0 MiB/s (exercises 10b and 10a, calibration "
        "round 3)."
    ) in job.striping


def test_where_spreading_was_slower_everywhere_the_advice_does_not_say_to_stripe() -> None:
    def slower_spread(key: str, reading: bool) -> dict[str, tuple[float, str]]:
        if key == "10b":
            return {"work": (80.0, "calibration round 3"), "tmp": (905.0, "calibration round 3")}
        return layout_figures(key, reading)

    job = advise_job(STREAMED, DEV, 24, WITH_LAYOUTS, slower_spread)

    assert "spread it over all of them" not in job.striping
    assert "striping did not pay here" in job.striping
    assert "1.4× slower than on one server: 80.0 MiB/s against 110.0 MiB/s" in job.striping
    assert "Keep it on one server here" in job.striping


def test_on_a_lustre_or_beegfs_site_the_advice_names_its_command() -> None:
    job = advise_job(STREAMED, VSC3, 64, SHAPES, figures_for)

    assert "on $GLOBAL (BeeGFS), beegfs-ctl --setpattern --numtargets=8 DIR" in job.striping
    assert "$HOME" not in job.striping  # NFS: no striping to ask for
    assert "MiB/s" not in job.striping  # VSC-3 has no exercise of the two layouts
    tacc = advise_job(STREAMED, facts_of("tacc"), 16, SHAPES, figures_for)
    assert "lfs setstripe -c -1 DIR" in tacc.striping


@pytest.mark.parametrize(
    "changes",
    [
        {"shared_files": 0},  # a file each: they spread over the servers by themselves
        {"nprocs": 1},  # one writer: its own link limits it first
        {"bytes_written": 64 * MiB, "writes": 64},  # a small file: little to spread
        {"common_sizes": ((16 * KiB, 64 * 64),)},  # small pieces: the collective advice's
    ],
)
def test_no_striping_advice_for_what_striping_does_not_help(changes: dict) -> None:
    job = advise_job(replace(STREAMED, **changes), DEV, 24, WITH_LAYOUTS, layout_figures)

    assert job.striping == ""


def test_a_job_that_wrote_much_is_told_what_a_target_that_compresses_would_store() -> None:
    """$PROJECT compresses: the site's runs of 11a measured 2.3× there, and a log
    does not say whether the job's data compresses, so both cases and how to find out."""
    measured = [
        replace(t, stored_ratio=(2.3, "median of 3 runs of exercise 11a here"))
        if t.compression
        else t
        for t in DEV
    ]
    job = advise_job(STREAMED, measured, 24, WITH_LAYOUTS, layout_figures)

    assert job.compression.startswith("Your job wrote 4 GiB. $PROJECT compresses what it stores")
    assert (
        "data that compresses took 2.3× less space there (median of 3 runs of exercise 11a "
        "here), so your 4 GiB would take about 1.7 GiB if it compresses as well"
    ) in job.compression
    assert "zstd -3 -c FILE | wc -c" in job.compression
    # Before any run measured it: what the target does, without a figure.
    unmeasured = advise_job(STREAMED, DEV, 24, WITH_LAYOUTS, layout_figures)
    assert "$PROJECT compresses what it stores (zstd, on every write). Data" in (
        unmeasured.compression
    )
    # A small output, or a site where nothing compresses: no word of it.
    small = replace(STREAMED, bytes_written=16 * MiB, writes=16)
    assert advise_job(small, measured, 24, WITH_LAYOUTS, layout_figures).compression == ""
    assert advise_job(STREAMED, VSC3, 64, SHAPES, figures_for).compression == ""
