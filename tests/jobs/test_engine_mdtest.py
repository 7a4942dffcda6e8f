"""The mdtest engine: its argv, and its parser on real outputs of the mdtest 4.1 the
dev cluster builds (tests/jobs/samples/README.md), cut and forged."""

from pathlib import Path

import pytest

from jobs.engines import get_engine
from jobs.engines.base import KiB, MiB, Pattern, ResultParseError, Target, Workload
from jobs.engines.mdtest import Mdtest

SAMPLES = Path(__file__).parent / "samples"
# Each real output's ranks and create, stat, read, remove operations per second.
MDTEST_4 = {
    "mdtest-4.1-files-1p.txt": (1, 1308.961, 329481.854, 125860.585, 10362.191),
    "mdtest-4.1-files-8p.txt": (8, 5208.282, 29409.076, 36436.564, 12140.622),
    "mdtest-4.1-files-8p-tmpfs.txt": (8, 32991.758, 32159.513, 36377.706, 49797.692),
    "mdtest-4.1-empty-files-8p-tmpfs.txt": (8, 22232.668, 25780.561, 25003.861, 25003.116),
}
TARGET = Target(directory="/srv/storagelab/scratch/ada/run-1")


def sample(name: str) -> str:
    return (SAMPLES / name).read_text()


def workload(**changes: object) -> Workload:
    fields: dict = {
        "pattern": Pattern.SEQUENTIAL,
        "block_size": 16 * KiB,
        "processes": 8,
        "size_per_process": 200 * 16 * KiB,
        "files_per_process": 200,
    }
    return Workload(**(fields | changes))


def value_after(argv: list[str], flag: str) -> str:
    return argv[argv.index(flag) + 1]


# The command


def test_each_rank_creates_its_files_in_a_directory_of_its_own() -> None:
    argv = Mdtest().command(workload(), TARGET)

    assert argv[0] == "mdtest"
    assert "-F" in argv and "-u" in argv
    assert value_after(argv, "-n") == "200"
    assert value_after(argv, "-d") == "/srv/storagelab/scratch/ada/run-1/mdtest"
    assert all(isinstance(arg, str) for arg in argv)


def test_each_file_is_written_and_read_back_whole() -> None:
    argv = Mdtest().command(workload(block_size=4 * KiB, size_per_process=200 * 4 * KiB), TARGET)

    assert value_after(argv, "-w") == value_after(argv, "-e") == "4096"


@pytest.mark.parametrize(("fsync", "present"), [(True, True), (False, False)])
def test_fsync_after_each_write_follows_the_workload(fsync: bool, present: bool) -> None:
    assert ("-y" in Mdtest().command(workload(fsync=fsync), TARGET)) == present


def test_it_runs_one_mpi_rank_per_process() -> None:
    assert Mdtest().tasks(workload(processes=8)) == 8
    assert isinstance(get_engine("mdtest"), Mdtest)


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"pattern": Pattern.RANDOM}, "random I/O needs fio or IOR"),
        ({"files_per_process": 1, "file_per_process": False}, "files of its own"),
    ],
    ids=["random", "shared-file"],
)
def test_what_mdtest_cannot_measure_is_refused(changes: dict, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        Mdtest().command(workload(**changes), TARGET)


def test_iterations_and_seconds_repeat_the_files_and_stop_making_them_on_time() -> None:
    argv = Mdtest().command(workload(iterations=12, seconds=3), TARGET)

    assert (value_after(argv, "-i"), value_after(argv, "-W")) == ("12", "3")
    assert argv[-2] == "-d"  # the directory stays last
    plain = Mdtest().command(workload(), TARGET)
    assert "-i" not in plain and "-W" not in plain


@pytest.mark.parametrize("changes", [{"read_only": True}, {"direct": True}], ids=["read", "direct"])
def test_reads_alone_and_direct_io_are_refused(changes: dict) -> None:
    with pytest.raises(ValueError, match="mdtest counts file operations"):
        Mdtest().command(workload(**changes), TARGET)


def test_it_reads_the_rates_of_iterations_stopped_by_their_stonewall() -> None:
    result = Mdtest().parse(sample("mdtest-4.1-iterations-stonewall-2p.txt"))

    # The Max column, as every mdtest figure; the stonewall's lines are not errors.
    assert (result.processes, result.create_ops_s) == (2, pytest.approx(44900.501))
    assert result.remove_ops_s == pytest.approx(91838.200)


def test_a_directory_mdtest_would_split_is_refused() -> None:
    with pytest.raises(ValueError, match="'@'"):
        Mdtest().command(workload(), Target(directory="/scratch/a@b/run-1"))


# The parser


@pytest.mark.parametrize("name", sorted(MDTEST_4))
def test_it_reads_create_stat_read_and_remove_rates_and_the_rank_count(name: str) -> None:
    processes, create, stat, read, remove = MDTEST_4[name]

    result = Mdtest().parse(sample(name))

    assert result.engine == "mdtest"
    assert result.processes == processes
    assert result.create_ops_s == pytest.approx(create)
    assert result.stat_ops_s == pytest.approx(stat)
    assert result.read_ops_s == pytest.approx(read)
    assert result.remove_ops_s == pytest.approx(remove)
    assert result.write_bytes_per_s is None and result.read_bytes_per_s is None


def test_the_tree_rows_are_not_taken_for_file_rows() -> None:
    result = Mdtest().parse(sample("mdtest-4.1-files-8p.txt"))

    assert result.create_ops_s != pytest.approx(62.630)  # "Tree creation"


def test_a_phase_that_did_not_run_has_no_figure() -> None:
    # mdtest -C (create only) prints 0 in the rows of the phases it skipped.
    output = sample("mdtest-4.1-files-8p.txt")
    for rate in ("29409.076", "36436.564", "12140.622"):  # stat, read, remove
        output = output.replace(rate, "0.000")

    result = Mdtest().parse(output)

    assert result.create_ops_s == pytest.approx(5208.282)
    assert result.stat_ops_s is result.read_ops_s is result.remove_ops_s is None


def test_a_rate_no_storage_can_give_is_a_parse_error_naming_the_phase() -> None:
    # 8 ranks creating 10^12 files per second: beyond 10^8 per rank (plausible_rate).
    output = sample("mdtest-4.1-files-8p.txt").replace("5208.282", "1000000000000.000")

    with pytest.raises(ResultParseError, match="create operations/s per process is beyond"):
        Mdtest().parse(output)


def test_an_older_mdtest_table_with_colons_is_read() -> None:
    output = (
        "mdtest-1.9.3 was launched with 4 total task(s) on 1 node(s)\n"
        "4 tasks, 4000 files\n\nSUMMARY: (of 1 iterations)\n"
        "   Operation                      Max            Min           Mean        Std Dev\n"
        "   ---------                      ---            ---           ----        -------\n"
        "   File creation     :       2040.279       2040.279       2040.279          0.000\n"
        "   File stat         :     330132.004     330132.004     330132.004          0.000\n"
        "   File read         :          0.000          0.000          0.000          0.000\n"
        "   File removal      :       6283.041       6283.041       6283.041          0.000\n"
        "\n-- finished at 01/19/2022 07:04:24 --\n"
    )

    result = Mdtest().parse(output)

    assert result.processes == 4
    assert result.create_ops_s == pytest.approx(2040.279)
    assert result.read_ops_s is None


def test_the_first_table_of_several_task_counts_is_taken() -> None:
    # mdtest -f 1 -l 8 -s 7: a table for 1 task, then one for 8.
    one, eight = sample("mdtest-4.1-files-1p.txt"), sample("mdtest-4.1-files-8p.txt")
    both = one.split("-- finished")[0] + eight[eight.index("8 tasks") :]

    result = Mdtest().parse(both)

    assert result.processes == 1
    assert result.create_ops_s == pytest.approx(1308.961)


def test_an_mdtest_error_is_the_reason() -> None:
    with pytest.raises(ResultParseError, match=r"mdtest failed: open64\(.*No such file"):
        Mdtest().parse(sample("mdtest-4.1-error-8p.txt"))


def test_an_aborted_rank_without_an_error_line_is_the_reason() -> None:
    output = sample("mdtest-4.1-error-8p.txt").replace("ERROR: ", "")

    with pytest.raises(ResultParseError, match="MPI_ABORT on rank 3"):
        Mdtest().parse(output)


def cut_before(marker: str, name: str = "mdtest-4.1-files-8p.txt") -> str:
    output = sample(name)
    return output[: output.index(marker)]


@pytest.mark.parametrize(
    ("output", "reason"),
    [
        ("", "empty"),
        (cut_before("SUMMARY"), "ends before its SUMMARY table"),
        (cut_before("File stat"), "ends before its '-- finished at' line"),
        (cut_before("-- finished"), "ends before its '-- finished at' line"),
        (sample("fio-seq-write-1p.json"), "no mdtest SUMMARY rate table"),
        (sample("ior-4.1-seq-8p-write-read.txt"), "no mdtest SUMMARY rate table"),
        ("\x00\x1b[2J garbage \ufffd", "no mdtest SUMMARY rate table"),
    ],
    ids=[
        "empty",
        "cut-before-summary",
        "cut-in-table",
        "cut-before-finished",
        "fio",
        "ior",
        "garbage",
    ],
)
def test_what_is_no_complete_mdtest_output_is_an_error(output: str, reason: str) -> None:
    with pytest.raises(ResultParseError, match=reason):
        Mdtest().parse(output)


@pytest.mark.parametrize("name", sorted(MDTEST_4))
def test_no_cut_of_a_sample_crashes_the_parser(name: str) -> None:
    output = sample(name)
    whole = Mdtest().parse(output)
    for end in range(0, len(output), max(1, len(output) // 151)):
        try:
            result = Mdtest().parse(output[:end])
        except ResultParseError as e:
            assert "\n" not in str(e)
        else:  # only cuts after the "finished" line's last dash
            assert result == whole


@pytest.mark.parametrize(
    "rate",
    ["nan", "inf", "-5208.282", "9e99", "lots"],
    ids=["nan", "inf", "negative", "huge", "word"],
)
def test_an_impossible_rate_in_a_forged_output_is_a_parse_error(rate: str) -> None:
    forged = sample("mdtest-4.1-files-8p.txt").replace(
        "File creation                5208.282", f"File creation                {rate}", 1
    )
    assert forged != sample("mdtest-4.1-files-8p.txt")

    with pytest.raises(ResultParseError):
        Mdtest().parse(forged)


def test_no_task_count_is_a_parse_error() -> None:
    output = "\n".join(
        line
        for line in sample("mdtest-4.1-files-8p.txt").splitlines()
        if "tasks" not in line and "task(s)" not in line
    )

    with pytest.raises(ResultParseError, match="how many tasks"):
        Mdtest().parse(output + "\n")


def test_sizes_in_the_workload_stay_within_what_mdtest_writes_per_file() -> None:
    w = workload(block_size=4 * KiB, size_per_process=1 * MiB, files_per_process=64)
    argv = Mdtest().command(w, TARGET)

    assert value_after(argv, "-w") == str(MiB // 64)
