"""The IOR engine: its argv, and its parser on IOR's text and JSON summaries: real
outputs of the IOR 4.1 the dev cluster builds (1 and 8 ranks, write and read, text
and JSON), and older releases' formats (tests/jobs/samples/README.md)."""

import re
from pathlib import Path

import pytest

from jobs.engines import get_engine
from jobs.engines.base import KiB, MiB, Pattern, ResultParseError, Target, Workload
from jobs.engines.ior import Ior

SAMPLES = Path(__file__).parent / "samples"
IOR_SAMPLES = sorted(p.name for p in SAMPLES.glob("ior-*") if "error" not in p.name)
WRITE_MIB_S = 237.37  # the older releases' samples' write rate
# The real IOR 4.1 outputs: ranks, write and read MiB/s, write and read IOPS.
IOR_4 = {
    "ior-4.1-seq-1p-write-read.txt": (1, 774.81, 13344.38, 774.81, 13344.38),
    "ior-4.1-seq-1p-write-read.json": (1, 657.3307, 13456.7604, 657.3307, 13456.7604),
    "ior-4.1-seq-8p-write-read.txt": (8, 250.01, 1580.72, 250.01, 1580.72),
    "ior-4.1-seq-8p-write-read.json": (8, 1033.1593, 1605.3792, 1033.1593, 1605.3792),
    "ior-4.1-shared-8p-write-read-tmpfs.txt": (8, 1083.02, 1376.71, 1083.02, 1376.71),
    "ior-4.1-shared-8p-write-read-tmpfs.json": (8, 926.6236, 1292.6681, 926.6236, 1292.6681),
    "ior-4.1-rand-4k-1p-write.txt": (1, 396.51, None, 101507.07, None),
    "ior-4.1-rand-4k-8p-write-tmpfs.json": (8, 1201.5588, None, 307599.0651, None),
}


def sample(name: str) -> str:
    return (SAMPLES / name).read_text()


def workload(**changes: object) -> Workload:
    fields: dict = {
        "pattern": Pattern.SEQUENTIAL,
        "block_size": 1 * MiB,
        "processes": 4,
        "size_per_process": 64 * MiB,
    }
    return Workload(**(fields | changes))


TARGET = Target(directory="/srv/storagelab/scratch/ada/run-1")


def value_after(argv: list[str], flag: str) -> str:
    return argv[argv.index(flag) + 1]


# The command


def test_the_command_writes_with_the_posix_backend_and_a_json_summary() -> None:
    argv = Ior().command(workload(), TARGET)

    assert argv[:4] == ["ior", "-a", "POSIX", "-w"]
    assert all(isinstance(arg, str) for arg in argv)
    assert value_after(argv, "-O") == "summaryFormat=JSON"
    assert value_after(argv, "-o") == "/srv/storagelab/scratch/ada/run-1/ior.dat"


def test_sizes_are_plain_byte_counts_per_process() -> None:
    argv = Ior().command(workload(block_size=4 * KiB, size_per_process=8 * MiB), TARGET)

    assert value_after(argv, "-t") == "4096"  # transfer size: bytes per I/O
    assert value_after(argv, "-b") == str(8 * MiB)  # block size: bytes per task
    assert value_after(argv, "-s") == "1"


def test_it_runs_one_mpi_rank_per_process() -> None:
    assert Ior().tasks(workload(processes=8)) == 8


@pytest.mark.parametrize(
    ("changes", "flag", "present"),
    [
        ({"file_per_process": True}, "-F", True),
        ({"file_per_process": False}, "-F", False),
        ({"pattern": Pattern.RANDOM, "block_size": 4 * KiB}, "-z", True),
        ({"pattern": Pattern.SEQUENTIAL}, "-z", False),
        ({"fsync": True}, "-e", True),
        ({"fsync": False}, "-e", False),
        ({"read_back": True}, "-r", True),
        ({"read_back": False}, "-r", False),
    ],
)
def test_each_workload_choice_maps_to_its_ior_flag(changes: dict, flag: str, present: bool) -> None:
    assert (flag in Ior().command(workload(**changes), TARGET)) == present


def test_random_offsets_on_a_shared_file_do_not_reorder_tasks() -> None:
    # IOR refuses -z with -C (or -Z) on a single shared file.
    argv = Ior().command(workload(pattern=Pattern.RANDOM, file_per_process=False), TARGET)

    assert "-C" not in argv and "-Z" not in argv


def test_it_never_asks_for_o_direct_on_tmpfs() -> None:
    for w in (workload(), workload(direct=True)):
        argv = Ior().command(w, Target(directory="/dev/shm/x", tmpfs=True))
        assert not any("odirect" in arg or arg == "-B" for arg in argv)


def test_direct_io_on_a_disk_is_iors_posix_odirect() -> None:
    argv = Ior().command(workload(direct=True), Target(directory="/scratch/x"))

    assert "--posix.odirect" in argv


def test_a_time_based_run_goes_through_its_bytes_again_until_its_seconds_passed() -> None:
    argv = Ior().command(workload(seconds=3, read_back=True), TARGET)

    assert argv[-2:] == ["-O", "minTimeDuration=3"]
    assert "-w" in argv and "-r" in argv  # each phase for 3 s at least
    assert "minTimeDuration=3" not in " ".join(Ior().command(workload(), TARGET))


def test_collective_calls_reads_alone_and_iterations_are_refused() -> None:
    collective = workload(seconds=3, mpi_io=True, collective=True, processes=4)
    with pytest.raises(ValueError, match="no time-based runs"):
        Ior().command(collective, TARGET)
    for changes in ({"read_only": True}, {"iterations": 2}):
        with pytest.raises(ValueError, match="iterations are mdtest's"):
            Ior().command(workload(**changes), TARGET)


def test_a_time_based_runs_figures_are_over_all_it_moved() -> None:
    """2 ranks × 8 MiB, each phase again until 2 s passed: far more than 16 MiB moved."""
    output = sample("ior-4.1-min-time-2p-write-read.json")  # JSON that is not valid, as IOR's
    times = [float(t) for t in re.findall(r'"MeanTime": ([0-9.]+)', output)]
    moved = [float(m) for m in re.findall(r'"xsizeMiB": ([0-9.]+)', output)]

    result = Ior().parse(output)

    assert len(times) == 2 and min(times) >= 2 and min(moved) > 16
    assert result.processes == 2
    assert result.write_mib_s == pytest.approx(16387.9756)
    assert result.read_mib_s == pytest.approx(20961.7254)


def test_many_small_files_are_left_to_fio() -> None:
    w = workload(block_size=4 * KiB, size_per_process=1 * MiB, files_per_process=64)

    with pytest.raises(ValueError, match="need fio"):
        Ior().command(w, TARGET)


def test_mpi_io_writes_through_iors_mpiio_backend_and_collective_adds_its_flag() -> None:
    independent = Ior().command(workload(mpi_io=True), TARGET)
    collective = Ior().command(workload(mpi_io=True, collective=True), TARGET)

    assert independent[:4] == collective[:4] == ["ior", "-a", "MPIIO", "-w"]
    assert "-c" not in independent and "-c" in collective
    assert "-c" not in Ior().command(workload(), TARGET)


def test_segments_interleave_each_ranks_share_in_pieces_of_one_transfer() -> None:
    w = workload(block_size=16 * KiB, size_per_process=4 * MiB, segments=256)

    argv = Ior().command(w, TARGET)

    # 256 segments of a 16 KiB block per rank: rank by rank, piece by piece.
    assert (value_after(argv, "-t"), value_after(argv, "-b"), value_after(argv, "-s")) == (
        "16384",
        "16384",
        "256",
    )


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"collective": True}, "collective calls are MPI-IO's"),
        ({"segments": 3}, "multiple of segments x block_size"),
        ({"processes": 2, "nodes": 4}, "more nodes than processes"),
    ],
)
def test_a_workload_that_cannot_run_as_written_is_refused(changes: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        workload(**changes)


def test_interleaved_mpi_io_pieces_go_in_one_call_through_a_file_view() -> None:
    shared = {"file_per_process": False, "block_size": 4 * KiB, "size_per_process": 8 * MiB}
    interleaved = Ior().command(workload(mpi_io=True, segments=2048, **shared), TARGET)
    plain = Ior().command(workload(mpi_io=True, **shared), TARGET)

    views = ["--mpiio.useStridedDatatype", "--mpiio.useFileView"]
    assert all(flag in interleaved for flag in views)
    assert not any(flag in plain for flag in views)
    with pytest.raises(ValueError, match="one transfer"):
        Ior().command(workload(mpi_io=True, segments=1024, **shared), TARGET)
    with pytest.raises(ValueError, match="written in order, not at random"):
        Ior().command(
            workload(mpi_io=True, segments=2048, pattern=Pattern.RANDOM, **shared), TARGET
        )


def test_mpi_io_has_no_direct_io_here() -> None:
    with pytest.raises(ValueError, match="direct I/O is a POSIX option"):
        Ior().command(workload(mpi_io=True, direct=True), TARGET)


@pytest.mark.parametrize("changes", [{"mpi_io": True}, {"segments": 4}, {"nodes": 2}])
def test_fio_leaves_mpi_io_segments_and_nodes_to_ior(changes: dict) -> None:
    with pytest.raises(ValueError, match="need IOR"):
        get_engine("fio").command(workload(**changes), TARGET)


def test_mdtest_leaves_mpi_io_and_segments_to_ior() -> None:
    for changes in ({"mpi_io": True}, {"segments": 4}):
        with pytest.raises(ValueError, match="need IOR"):
            get_engine("mdtest").command(workload(**changes), TARGET)


def test_the_engine_registry_hands_out_ior() -> None:
    assert isinstance(get_engine("ior"), Ior)


# The parser


def test_it_reads_the_summary_table_of_ior_3_3_past_its_max_lines() -> None:
    result = Ior().parse(sample("ior-3.3.0-write-read.txt"))

    assert result.engine == "ior"
    assert result.processes == 4
    assert result.write_bytes_per_s == pytest.approx(WRITE_MIB_S * MiB)
    assert result.read_bytes_per_s == pytest.approx(1011.52 * MiB)
    assert result.write_iops == pytest.approx(237.37)  # Max(OPs): 1 MiB transfers
    assert result.read_iops == pytest.approx(1011.52)
    assert result.write_latency is None  # IOR has no percentiles


@pytest.mark.parametrize("name", sorted(IOR_4))
def test_it_reads_real_ior_4_outputs_with_their_rank_count(name: str) -> None:
    processes, write, read, write_iops, read_iops = IOR_4[name]

    result = Ior().parse(sample(name))

    assert result.engine == "ior"
    assert result.processes == processes
    assert result.write_mib_s == pytest.approx(write)
    assert result.write_iops == pytest.approx(write_iops)
    if read is None:
        assert result.read_bytes_per_s is None and result.read_iops is None
    else:
        assert result.read_mib_s == pytest.approx(read)
        assert result.read_iops == pytest.approx(read_iops)


def test_ior_4_text_has_no_max_write_line_and_is_read_from_its_summary_table() -> None:
    output = sample("ior-4.1-seq-8p-write-read.txt")
    assert "Max Write" not in output and "Summary of all tests:" in output

    assert Ior().parse(output).write_mib_s == pytest.approx(250.01)


def test_random_4k_transfers_give_256_operations_per_mib() -> None:
    result = Ior().parse(sample("ior-4.1-rand-4k-1p-write.txt"))

    assert result.write_iops == pytest.approx(result.write_mib_s * 256, rel=1e-3)


def test_it_reads_the_json_summary() -> None:
    result = Ior().parse(sample("ior-3.3.0-summary.json"))

    assert result.processes == 4
    assert result.write_mib_s == pytest.approx(237.3745)
    assert result.read_mib_s == pytest.approx(1011.52)
    assert result.write_iops == pytest.approx(237.3745)


def test_text_and_json_of_the_same_run_agree() -> None:
    text = Ior().parse(sample("ior-3.3.0-write-read.txt"))
    summary = Ior().parse(sample("ior-3.3.0-summary.json"))

    assert text.processes == summary.processes
    assert text.write_mib_s == pytest.approx(summary.write_mib_s, abs=0.005)
    assert text.read_mib_s == pytest.approx(summary.read_mib_s, abs=0.005)


@pytest.mark.parametrize(
    ("name", "processes", "reads"),
    [
        ("ior-4.0.0-verbose-summary-invalid.json", 8, True),
        ("ior-3.2.0-summary-invalid.json", 2, False),
    ],
)
def test_it_reads_the_invalid_json_released_versions_printed(
    name: str, processes: int, reads: bool
) -> None:
    result = Ior().parse(sample(name))

    assert result.processes == processes
    assert result.write_mib_s == pytest.approx(237.3745)
    assert (result.read_mib_s is not None) == reads


@pytest.mark.parametrize(
    ("output", "reason"),
    [
        (sample("ior-3.3.0-open-error.txt"), r"IOR failed: open64\(.*No such file or directory"),
        (
            sample("ior-4.1-open-error-8p.txt"),
            r"IOR failed: open64\(.*/nowhere/ior\.dat\.0000000\d.*No such file or directory",
        ),
        (
            "IOR-4.0.0: MPI Coordinated Test of Parallel I/O\n"
            'ERROR: open64("/x/ior.dat", 66, 0664) failed: Permission denied, '
            "(aiori-POSIX.c:510)\n",
            "IOR failed: open64.*Permission denied",
        ),
    ],
    ids=["3.3", "4.1-8-ranks", "4.0"],
)
def test_an_ior_error_is_the_reason(output: str, reason: str) -> None:
    with pytest.raises(ResultParseError, match=reason):
        Ior().parse(output)


def text_cut_before(marker: str, name: str = "ior-3.3.0-write-read.txt") -> str:
    output = sample(name)
    return output[: output.index(marker)]


IOR_4_TEXT = "ior-4.1-seq-8p-write-read.txt"


@pytest.mark.parametrize(
    ("output", "reason"),
    [
        ("", "empty"),
        (text_cut_before("write     237"), "ends before its 'Summary of all tests' table"),
        (text_cut_before("Max Write"), "ends before its 'Summary of all tests' table"),
        (text_cut_before("Summary of all tests"), "ends before its 'Summary of all tests'"),
        # a row cut short: its #Tasks column is missing
        (text_cut_before("read         1011.52"), "'Summary of all tests' table is complete"),
        (text_cut_before("read         1011.52")[:-60], "ends before its 'Summary of all tests'"),
        (text_cut_before("Results:", IOR_4_TEXT), "ends before its results"),
        (
            text_cut_before("read      1580.72", IOR_4_TEXT),
            "ends before its 'Summary of all tests'",
        ),
        (text_cut_before("Summary of all", IOR_4_TEXT), "ends before its 'Summary of all tests'"),
        (text_cut_before("read         1580.72", IOR_4_TEXT), "table is complete"),
        (
            "IOR-3.3.0: MPI Coordinated Test of Parallel I/O\nBegan : today\n",
            "ends before its results",
        ),
        ("Operation,Max(MiB)\nwrite,237.37\n", "no IOR summary in the output"),
        ("\x00\x1b[2J garbage \ufffd", "no IOR summary in the output"),
    ],
    ids=[
        "empty",
        "3.3-cut-in-results",
        "3.3-cut-before-max-lines",
        "3.3-cut-before-summary",
        "3.3-cut-before-read-row",
        "3.3-cut-in-write-row",
        "4.1-cut-before-results",
        "4.1-cut-before-read-result",
        "4.1-cut-before-summary",
        "4.1-cut-before-read-row",
        "header-only",
        "csv",
        "garbage",
    ],
)
def test_what_is_no_complete_text_summary_is_an_error(output: str, reason: str) -> None:
    with pytest.raises(ResultParseError, match=reason):
        Ior().parse(output)


def test_a_json_summary_cut_in_half_is_reported_as_truncated() -> None:
    output = sample("ior-3.3.0-summary.json")

    with pytest.raises(ResultParseError, match="truncated"):
        Ior().parse(output[: len(output) // 2])


def test_a_json_summary_cut_after_the_write_entry_misses_the_read_figures() -> None:
    output = sample("ior-3.3.0-summary.json")
    cut = output.index('"operation": "read"')

    with pytest.raises(ResultParseError, match="no read figures"):
        Ior().parse(output[:cut])


def test_a_zero_bandwidth_is_an_error_not_a_result() -> None:
    output = sample("ior-4.1-rand-4k-1p-write.txt")
    row = next(line for line in output.splitlines() if line.startswith("write         396.51"))
    forged = output.replace(row, row.replace("396.51", "  0.00", 1))

    with pytest.raises(ResultParseError, match="no write bandwidth"):
        Ior().parse(forged)


def test_fios_json_is_not_taken_for_iors() -> None:
    with pytest.raises(ResultParseError, match="no IOR summary in the output"):
        Ior().parse(sample("fio-seq-write-1p.json"))


@pytest.mark.parametrize("name", IOR_SAMPLES)
def test_no_cut_of_a_sample_crashes_the_parser(name: str) -> None:
    output = sample(name)
    whole = Ior().parse(output)
    for end in range(0, len(output), max(1, len(output) // 151)):
        try:
            result = Ior().parse(output[:end])
        except ResultParseError as e:
            assert "\n" not in str(e)
        else:  # only cuts after the last figure it needs, which reads them all
            assert result == whole


@pytest.mark.parametrize(
    "bandwidth", ["NaN", "Infinity", "-237.3745", "99999999999"], ids=str.lower
)
def test_an_impossible_bandwidth_in_a_forged_summary_is_a_parse_error(bandwidth: str) -> None:
    forged = sample("ior-3.3.0-summary.json").replace(
        '"bwMaxMIB": 237.3745', f'"bwMaxMIB": {bandwidth}', 1
    )
    assert forged != sample("ior-3.3.0-summary.json")

    with pytest.raises(ResultParseError):
        Ior().parse(forged)
