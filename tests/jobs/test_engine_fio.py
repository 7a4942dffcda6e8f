"""The fio engine: the argv it builds, run for real, and its parser on real fio
3.33 output (tests/jobs/samples/README.md says how each sample was made)."""

import json
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from jobs.engines import get_engine
from jobs.engines.base import KiB, MiB, Pattern, ResultParseError, Target, Workload
from jobs.engines.fio import Fio

SAMPLES = Path(__file__).parent / "samples"
FIO_SAMPLES = sorted(SAMPLES.glob("fio-*.json"))


def sample(name: str) -> str:
    return (SAMPLES / name).read_text()


def report(name: str) -> dict:
    return json.loads(sample(name))


def workload(**changes: object) -> Workload:
    fields: dict = {
        "pattern": Pattern.SEQUENTIAL,
        "block_size": 1 * MiB,
        "processes": 1,
        "size_per_process": 4 * MiB,
    }
    return Workload(**(fields | changes))


def options(argv: list[str]) -> dict[str, str]:
    """The argv's --key=value options (the last one wins, as in fio's job sections)."""
    return dict(arg[2:].split("=", 1) for arg in argv if arg.startswith("--") and "=" in arg)


DISK = Target(directory="/srv/storagelab/scratch/ada/run-1")
TMPFS = Target(directory="/dev/shm/storagelab/ada/run-1", tmpfs=True)


# The command


def test_the_command_is_an_argv_that_writes_json_into_the_run_directory() -> None:
    argv = Fio().command(workload(), DISK)

    assert argv[0] == "fio"
    assert all(isinstance(arg, str) for arg in argv)
    assert "--output-format=json" in argv
    assert options(argv)["directory"] == DISK.directory
    assert options(argv)["ioengine"] == "psync"
    assert options(argv)["bs"] == str(1 * MiB)
    assert options(argv)["size"] == str(4 * MiB)
    assert options(argv)["rw"] == "write"


@pytest.mark.parametrize("target", [DISK, TMPFS], ids=["disk", "tmpfs"])
def test_it_uses_the_page_cache_unless_the_exercise_asks_for_direct_io(target: Target) -> None:
    argv = Fio().command(workload(pattern=Pattern.RANDOM, block_size=4 * KiB), target)

    assert options(argv)["direct"] == "0"


def test_direct_io_goes_past_the_cache_of_a_disk_but_not_of_memory() -> None:
    direct = workload(pattern=Pattern.RANDOM, block_size=4 * KiB, direct=True)

    assert options(Fio().command(direct, DISK))["direct"] == "1"
    # tmpfs has no device below its page cache (and older kernels refuse O_DIRECT).
    assert options(Fio().command(direct, TMPFS))["direct"] == "0"


def test_a_time_based_run_writes_for_its_seconds_over_its_files() -> None:
    argv = Fio().command(workload(size_per_process=64 * MiB, seconds=2), DISK)

    assert "--time_based" in argv and options(argv)["runtime"] == "2s"
    assert options(argv)["size"] == str(64 * MiB)  # the file it goes over again
    assert "--time_based" not in Fio().command(workload(), DISK)


def test_a_time_based_read_back_writes_then_reads_each_for_its_seconds() -> None:
    argv = Fio().command(workload(seconds=3, read_back=True), DISK)

    # Global options, before the first job: both jobs go for 3 s over the same files.
    assert argv.index("--time_based") < argv.index("--name=write") < argv.index("--name=read")
    assert options(argv)["runtime"] == "3s"
    assert "--stonewall" in argv[argv.index("--name=read") :]


def test_a_read_only_run_lays_its_files_out_untimed_and_times_only_reads() -> None:
    argv = Fio().command(workload(read_only=True, seconds=3, direct=True), DISK)

    assert "--name=write" not in argv and "--end_fsync=1" not in argv
    assert argv[-2:] == ["--name=read", "--rw=read"]
    assert options(argv)["direct"] == "1"  # past the page cache the layout went through
    scattered = Fio().command(workload(read_only=True, pattern=Pattern.RANDOM), DISK)
    assert scattered[-1] == "--rw=randread"


def test_a_read_only_run_reads_many_small_files_one_after_the_other() -> None:
    w = workload(read_only=True, block_size=16 * KiB, size_per_process=64 * 16 * KiB,
                 files_per_process=64, direct=True)  # fmt: skip

    opts = options(Fio().command(w, DISK))

    assert (opts["nrfiles"], opts["filesize"], opts["openfiles"]) == ("64", str(16 * KiB), "1")


def test_what_only_reads_has_nothing_to_read_back_nor_repeats_by_iterations() -> None:
    with pytest.raises(ValueError, match="no writes to read back"):
        workload(read_only=True, read_back=True)
    with pytest.raises(ValueError, match="iterations are mdtest's"):
        Fio().command(workload(iterations=3), DISK)


def test_it_forks_one_job_per_process_in_a_single_slurm_task() -> None:
    w = workload(processes=8)

    assert options(Fio().command(w, DISK))["numjobs"] == "8"
    assert Fio().tasks(w) == 1


def test_random_writes_are_4k_writes_at_repeatable_random_offsets() -> None:
    argv = Fio().command(workload(pattern=Pattern.RANDOM, block_size=4 * KiB), DISK)

    assert options(argv)["rw"] == "randwrite"
    assert options(argv)["bs"] == "4096"
    assert options(argv)["randrepeat"] == "1"
    assert "--norandommap" not in argv  # every block is written exactly once


def test_fsync_flushes_the_files_before_the_clock_stops() -> None:
    assert "--end_fsync=1" in Fio().command(workload(fsync=True), DISK)
    assert "--end_fsync=1" not in Fio().command(workload(fsync=False), DISK)


def test_read_back_is_a_second_job_after_the_writers_on_the_same_files() -> None:
    argv = Fio().command(workload(read_back=True, pattern=Pattern.RANDOM), DISK)

    read_job = argv[argv.index("--name=read") :]
    assert "--stonewall" in read_job
    assert "--rw=randread" in read_job
    # One file name pattern for both jobs, given before the first job section.
    assert argv.index("--filename_format=data.$jobnum.$filenum") < argv.index("--name=write")


def test_a_shared_file_gives_each_process_its_own_part_of_it() -> None:
    argv = Fio().command(workload(processes=4, file_per_process=False), DISK)

    assert options(argv)["filename"] == "shared.dat"
    assert options(argv)["filesize"] == str(16 * MiB)
    assert options(argv)["offset_increment"] == str(4 * MiB)
    assert "--filename_format=data.$jobnum.$filenum" not in argv


def test_many_small_files_split_the_size_into_files_of_whole_blocks() -> None:
    w = workload(block_size=4 * KiB, size_per_process=1 * MiB, files_per_process=3)

    layout = options(Fio().command(w, DISK))

    assert layout["nrfiles"] == "3"
    file_size = int(layout["filesize"])
    assert file_size % (4 * KiB) == 0
    assert file_size == 340 * KiB  # 1 MiB / 3 = 341.3 KiB, down to whole 4 KiB blocks
    assert int(layout["size"]) == 3 * file_size
    assert layout["openfiles"] == "1"


def test_a_directory_fio_would_split_at_its_colon_is_refused() -> None:
    with pytest.raises(ValueError, match="':'"):
        Fio().command(workload(), Target(directory="/scratch/a:b"))


def test_the_engine_registry_hands_out_fio() -> None:
    assert isinstance(get_engine("fio"), Fio)


# The parser, on real output


def test_it_reads_one_sequential_writer() -> None:
    job = report("fio-seq-write-1p.json")["jobs"][0]

    result = Fio().parse(sample("fio-seq-write-1p.json"))

    assert result.engine == "fio"
    assert result.processes == 1
    assert result.write_bytes_per_s == job["write"]["bw_bytes"]
    assert result.write_iops == pytest.approx(job["write"]["iops"])
    assert result.read_bytes_per_s is None
    assert result.read_iops is None
    assert result.read_latency is None


def test_it_sums_jobs_without_group_reporting() -> None:
    jobs = report("fio-seq-write-8p.json")["jobs"]
    assert len(jobs) == 8

    result = Fio().parse(sample("fio-seq-write-8p.json"))

    assert result.processes == 8
    assert result.write_bytes_per_s == sum(job["write"]["bw_bytes"] for job in jobs)
    assert result.write_iops == pytest.approx(sum(job["write"]["iops"] for job in jobs))


def test_it_converts_latency_percentiles_to_microseconds() -> None:
    clat = report("fio-seq-write-1p.json")["jobs"][0]["write"]["clat_ns"]

    latency = Fio().parse(sample("fio-seq-write-1p.json")).write_latency

    assert latency is not None
    assert latency.p50 == clat["percentile"]["50.000000"] / 1000
    assert latency.p95 == min(clat["percentile"]["95.000000"], clat["max"]) / 1000
    assert latency.max == clat["max"] / 1000


def test_each_percentile_of_several_jobs_is_the_worst_jobs() -> None:
    clats = [job["write"]["clat_ns"] for job in report("fio-rand-write-4k-8p-tmpfs.json")["jobs"]]

    latency = Fio().parse(sample("fio-rand-write-4k-8p-tmpfs.json")).write_latency

    assert latency is not None
    assert latency.p50 == max(c["percentile"]["50.000000"] for c in clats) / 1000
    assert latency.max == max(c["max"] for c in clats) / 1000


@pytest.mark.parametrize("name", [s.name for s in FIO_SAMPLES])
def test_percentiles_rise_and_never_pass_the_maximum(name: str) -> None:
    result = Fio().parse(sample(name))

    for latency in (result.write_latency, result.read_latency):
        if latency is not None:
            assert latency.p50 <= latency.p95 <= latency.p99 <= latency.max


@pytest.mark.parametrize(
    ("name", "processes"),
    [("fio-rand-write-4k-1p-tmpfs.json", 1), ("fio-rand-write-4k-8p-tmpfs.json", 8)],
)
def test_random_4k_writes_count_one_operation_per_4k(name: str, processes: int) -> None:
    result = Fio().parse(sample(name))

    assert result.processes == processes
    assert result.write_iops == pytest.approx(result.write_bytes_per_s / (4 * KiB), rel=1e-3)


def test_a_read_back_has_separate_write_and_read_figures_of_the_same_processes() -> None:
    jobs = report("fio-write-read-back-2p.json")["jobs"]
    readers = [job for job in jobs if job["jobname"] == "read"]

    result = Fio().parse(sample("fio-write-read-back-2p.json"))

    assert result.processes == 2  # two writers, then two readers: not four at once
    assert result.read_bytes_per_s == sum(job["read"]["bw_bytes"] for job in readers)
    assert result.write_bytes_per_s is not None
    assert result.read_latency is not None


def test_a_read_only_run_has_a_read_figure_and_no_write_figure() -> None:
    data = report("fio-read-only-2p-direct.json")

    result = Fio().parse(sample("fio-read-only-2p-direct.json"))

    assert result.write_bytes_per_s is None
    assert result.read_bytes_per_s == data["jobs"][0]["read"]["bw_bytes"]
    assert result.processes == 2
    assert data["jobs"][0]["read"]["runtime"] >= 2000  # its 2 s, in ms


def test_under_group_reporting_an_entry_stands_for_numjobs_processes() -> None:
    data = report("fio-group-reporting-8p-read-back.json")
    assert len(data["jobs"]) == 2  # one entry per phase

    result = Fio().parse(sample("fio-group-reporting-8p-read-back.json"))

    assert result.processes == 8
    assert result.write_bytes_per_s == data["jobs"][0]["write"]["bw_bytes"]
    assert result.read_bytes_per_s == data["jobs"][1]["read"]["bw_bytes"]


def test_it_reads_many_small_files_and_a_shared_file() -> None:
    many = Fio().parse(sample("fio-many-small-files-tmpfs.json"))
    shared = Fio().parse(sample("fio-shared-file-4p-tmpfs.json"))

    assert (many.processes, shared.processes) == (2, 4)
    assert many.write_mib_s > 0 and shared.write_mib_s > 0


def test_it_skips_what_fio_prints_before_its_json() -> None:
    output = sample("fio-note-before-json.txt")
    assert output.startswith("note: ")

    assert Fio().parse(output).write_mib_s > 0


# The parser, on what is not a result


def test_a_failed_job_is_an_error_even_when_others_wrote() -> None:
    with pytest.raises(ResultParseError, match=r"'write' failed: Is a directory \(error 21\)"):
        Fio().parse(sample("fio-job-error.txt"))


def test_fios_complaint_is_the_reason_when_there_is_no_json() -> None:
    with pytest.raises(ResultParseError, match="is not a directory"):
        Fio().parse(sample("fio-not-a-directory.txt"))


def test_an_output_cut_in_half_is_reported_as_truncated() -> None:
    output = sample("fio-write-read-back-2p.json")

    with pytest.raises(ResultParseError, match="truncated"):
        Fio().parse(output[: len(output) // 2])


def test_a_garbled_output_is_reported_as_not_json() -> None:
    output = sample("fio-seq-write-1p.json")
    middle = len(output) // 2

    with pytest.raises(ResultParseError, match="not valid JSON at line"):
        Fio().parse(output[:middle] + "#@!" + output[middle + 3 :])


@pytest.mark.parametrize(
    ("output", "reason"),
    [
        ("", "empty"),
        ("\n  \n", "empty"),
        ("write: (groupid=0, jobs=1): err= 0\n  write: IOPS=2048", "no JSON"),
        ('{"fio version": "fio-3.33", "jobs": []}', "no jobs"),
        ("[1, 2]\n", "no JSON"),
    ],
)
def test_what_is_no_fio_report_is_an_error(output: str, reason: str) -> None:
    with pytest.raises(ResultParseError, match=reason):
        Fio().parse(output)


def test_a_run_that_moved_no_data_is_an_error_not_zeros() -> None:
    data = report("fio-seq-write-1p.json")
    data["jobs"][0]["write"]["io_bytes"] = 0

    with pytest.raises(ResultParseError, match="neither write nor read"):
        Fio().parse(json.dumps(data))


def test_a_job_without_its_figures_is_an_error_not_a_crash() -> None:
    data = report("fio-seq-write-8p.json")
    del data["jobs"][3]["write"]

    with pytest.raises(ResultParseError, match="lacks an expected field"):
        Fio().parse(json.dumps(data))


@pytest.mark.parametrize("name", [s.name for s in FIO_SAMPLES])
def test_no_cut_of_a_sample_crashes_the_parser(name: str) -> None:
    output = sample(name)
    for end in range(0, len(output), max(1, len(output) // 97)):
        try:
            result = Fio().parse(output[:end])
        except ResultParseError as e:
            assert "\n" not in str(e)
        else:  # a cut after the JSON's end loses nothing
            assert result.write_mib_s or result.read_mib_s


# The argv, run for real


@pytest.fixture
def tmpfs_dir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="fio-test-", dir="/dev/shm") as directory:
        yield Path(directory)


def run(w: Workload, directory: Path, tmpfs: bool) -> str:
    argv = Fio().command(w, Target(directory=str(directory), tmpfs=tmpfs))
    done = subprocess.run(argv, cwd=directory, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stderr + done.stdout  # as the job script captures it


needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")


@needs_fio
@pytest.mark.parametrize("processes", [1, 2])
@pytest.mark.parametrize("pattern", [Pattern.SEQUENTIAL, Pattern.RANDOM])
@pytest.mark.parametrize("on_tmpfs", [False, True], ids=["disk", "tmpfs"])
def test_the_argv_runs_and_its_output_parses(
    pattern: Pattern, processes: int, on_tmpfs: bool, tmp_path: Path, tmpfs_dir: Path
) -> None:
    block = 4 * KiB if pattern == Pattern.RANDOM else 1 * MiB
    w = workload(pattern=pattern, block_size=block, processes=processes)

    result = Fio().parse(run(w, tmpfs_dir if on_tmpfs else tmp_path, on_tmpfs))

    assert result.write_mib_s > 0
    assert result.processes == processes
    assert result.read_mib_s is None


@needs_fio
@pytest.mark.parametrize(
    "changes",
    [
        {"read_back": True, "processes": 2},
        {"file_per_process": False, "processes": 2},
        {"files_per_process": 16, "block_size": 4 * KiB, "processes": 2},
    ],
    ids=["read-back", "shared-file", "many-files"],
)
def test_the_other_layouts_run_and_parse(changes: dict, tmpfs_dir: Path) -> None:
    result = Fio().parse(run(workload(**changes), tmpfs_dir, True))

    assert result.write_mib_s > 0
    assert result.processes == 2
    assert (result.read_mib_s is not None) == changes.get("read_back", False)


@needs_fio
def test_many_small_files_are_written_as_separate_files(tmpfs_dir: Path) -> None:
    w = workload(files_per_process=16, block_size=4 * KiB, processes=2, size_per_process=1 * MiB)

    run(w, tmpfs_dir, True)

    files = sorted(p.name for p in tmpfs_dir.iterdir())
    assert len(files) == 32
    assert all((tmpfs_dir / name).stat().st_size == 64 * KiB for name in files)


# A forged output: the job posts it, so anyone holding the run's secret can write it.


@pytest.mark.parametrize(
    "bw_bytes",
    ["NaN", "Infinity", "-Infinity", "-5", "0.0", "2e13"],
    ids=["nan", "infinity", "minus-infinity", "negative", "zero", "20-TB-per-process"],
)
def test_an_impossible_bandwidth_is_a_parse_error_not_a_figure(bw_bytes: str) -> None:
    forged = sample("fio-seq-write-1p.json").replace(
        '"bw_bytes" : 2033601939', f'"bw_bytes" : {bw_bytes}', 1
    )
    assert forged != sample("fio-seq-write-1p.json")

    with pytest.raises(ResultParseError) as refused:
        Fio().parse(forged)

    assert "\n" not in str(refused.value)


@pytest.mark.parametrize("field", ["iops", "clat_ns"])
def test_an_impossible_rate_or_latency_is_a_parse_error(field: str) -> None:
    data = report("fio-seq-write-1p.json")
    write = data["jobs"][0]["write"]
    if field == "iops":
        write["iops"] = float("nan")
    else:
        write["clat_ns"]["percentile"]["50.000000"] = -1.0

    with pytest.raises(ResultParseError):
        Fio().parse(json.dumps(data))


# A sweep of request sizes (exercise 9)

SWEEP = {"block_sizes": (4 * KiB, 64 * KiB, 1 * MiB), "seconds": 1}


def test_a_sweep_writes_each_size_after_the_one_before_on_files_of_its_own() -> None:
    argv = Fio().command(workload(**SWEEP), DISK)

    sections = [i for i, arg in enumerate(argv) if arg.startswith("--name=")]
    assert [argv[i] for i in sections] == [
        "--name=write-4096",
        "--name=write-65536",
        "--name=write-1048576",
    ]
    for start, size in zip(sections, SWEEP["block_sizes"], strict=True):
        own = options(argv[start : start + 6])
        assert own["bs"] == str(size) and own["rw"] == "write"
        assert own["filename_format"] == f"data.{size}.$jobnum.$filenum"
        assert "--stonewall" in argv[start : start + 6]
    assert options(argv)["runtime"] == "1s" and "--time_based" in argv


@pytest.mark.parametrize(
    "changes, refused",
    [
        ({"block_sizes": (64 * KiB, 4 * KiB), "block_size": 4 * KiB}, "smallest first"),
        ({"block_sizes": (4 * KiB, 64 * KiB)}, "block_size is the sweep's largest size"),
        ({"seconds": None}, "set seconds"),
        ({"file_per_process": False}, "one file per process"),
        ({"block_sizes": (3000, 1 * MiB)}, "a multiple of every size"),
    ],
)
def test_a_sweep_that_cannot_run_as_the_lab_shows_it_is_refused(changes, refused) -> None:
    with pytest.raises(ValueError, match=refused):
        workload(**(SWEEP | changes))


def test_it_reads_a_sweep_size_by_size_and_takes_the_largest_for_the_runs_figure() -> None:
    name = "fio-sweep-1p-tmpfs.json"
    jobs = {int(j["job options"]["bs"]): j["write"]["bw_bytes"] for j in report(name)["jobs"]}

    result = Fio().parse(sample(name))

    assert [size for size, _ in result.series] == sorted(jobs) == [4 * KiB, 64 * KiB, 1 * MiB]
    assert dict(result.series) == pytest.approx(jobs)
    assert result.write_bytes_per_s == jobs[1 * MiB] and result.processes == 1
    assert result.summary()["series_mib_s"][0] == (4 * KiB, pytest.approx(jobs[4 * KiB] / MiB))


def test_a_crafted_sweep_of_many_sizes_is_refused_before_it_costs() -> None:
    job = report("fio-sweep-1p-tmpfs.json")["jobs"][0]
    many = [
        job | {"job options": job["job options"] | {"bs": str(4096 * (i + 1))}} for i in range(5000)
    ]

    with pytest.raises(ResultParseError, match="5000 request sizes"):
        Fio().parse(json.dumps({"jobs": many}))


def test_data_that_compresses_is_fresh_for_every_write_with_its_share_of_zeros() -> None:
    """11a's data packs to about 1/2.3 with zstd, 11b's not at all (random bytes made
    for every write); without a share, fio's own random bytes."""
    for share in (57, 0):
        argv = Fio().command(workload(compressible=share), DISK)
        assert options(argv)["buffer_compress_percentage"] == str(share)
        assert "--refill_buffers" in argv
    plain = Fio().command(workload(), DISK)
    assert "buffer_compress_percentage" not in options(plain)
    for engine in ("ior", "mdtest"):
        with pytest.raises(ValueError, match="compress"):
            get_engine(engine).command(workload(compressible=57), DISK)
