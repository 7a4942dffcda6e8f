"""Reading real Darshan logs (the PyDarshan wheel's examples and fio runs recorded
here, logs/README.md) into their I/O (JobIO), in the sandbox the portal uses."""

from pathlib import Path

import pytest

from jobio.sandbox import LogUnreadable, parse
from tests.jobio.logs import crafted_header, log, not_a_log, truncated

LIMITS = {"seconds": 20, "memory_bytes": 768 * 2**20, "max_bytes": 64 * 2**20}


def read(path: Path):
    return parse(path, **LIMITS)


def test_it_reads_random_4k_writes_as_fio_made_them() -> None:
    io = read(log("random-4k"))
    assert (io.nprocs, io.files, io.shared_files) == (1, 1, 0)
    assert (io.writes, io.bytes_written, io.bytes_read) == (16384, 64 * 2**20, 0)
    assert io.write_sizes[2] == 16384  # all in the 1-10 KiB bin
    assert io.typical_request_bytes == 4096
    assert io.footprint_bytes == 64 * 2**20
    # Every block once at random: about half go "forward", almost none follow on.
    assert 0.4 < io.sequential_share < 0.6
    assert io.consecutive_share < 0.05


def test_it_reads_a_large_sequential_write() -> None:
    io = read(log("sequential-1m"))
    assert (io.writes, io.bytes_written) == (2048, 2 * 2**30)
    assert io.write_sizes[4] == 2048  # 1 MiB requests count in Darshan's 100K-1M bin
    assert io.typical_request_bytes == 2**20
    assert io.sequential_share == io.consecutive_share == 1.0
    assert io.syncs == 1  # fio's --end_fsync: one fsync at the end


def test_a_job_that_never_syncs_is_told_so(client, make_user, dev_profile) -> None:
    """The MPI example never calls fsync: its page says its last writes may still
    have been in memory (4a's trap); fio's, with one fsync each, does not."""
    from jobio.models import JobCheck  # noqa: PLC0415

    client.force_login(user := make_user())
    pages = {}
    for name in ("example", "small-files"):
        io = read(log(name))
        check = JobCheck.objects.create(user=user, source="upload", label=name, io=io.to_json())
        pages[name] = client.get(f"/check-my-job/{check.pk}/").content.decode()

    assert "<td>0 (fsync and fdatasync): none, so when the job ended" in pages["example"]
    assert "<td>1000 (fsync and fdatasync)</td>" in pages["small-files"]


def test_it_reads_many_small_files_and_their_metadata_time() -> None:
    io = read(log("small-files"))
    assert (io.files, io.writes, io.typical_request_bytes) == (1000, 1000, 16384)
    assert io.meta_share > 0.3  # creates and closes cost as much as the writes


def test_it_reads_an_mpi_job_of_2048_ranks_sharing_one_file() -> None:
    io = read(log("example"))
    assert (io.job_id, io.uid, io.nprocs) == (4478544, 69615, 2048)
    assert (io.files, io.shared_files) == (1, 1)
    assert io.bytes_written == 2199023259968 and io.bytes_read == 0
    assert io.typical_request_bytes == 128 * 2**20


def test_it_reads_reads_and_writes_of_a_job_with_many_files() -> None:
    io = read(log("dxt"))
    assert io.files == 214 and io.reads > io.writes > 0
    assert io.bytes_read == 22517726 and io.bytes_written == 13021781


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (not_a_log, "This is not a Darshan log"),
        (crafted_header, "This is not a Darshan log"),
        (lambda tmp: truncated(tmp, "example", 0.6), "cut short or damaged"),
        (lambda tmp: truncated(tmp, "random-4k", 0.9), "cut short or damaged"),
        (lambda tmp: truncated(tmp, "small-files", 0.5), "cut short or damaged"),
    ],
)
def test_a_bad_file_gets_one_clear_reason(tmp_path: Path, make, says: str) -> None:
    with pytest.raises(LogUnreadable, match=says) as refused:
        read(make(tmp_path))
    assert "\n" not in str(refused.value)


def test_a_log_without_the_posix_module_says_so() -> None:
    with pytest.raises(LogUnreadable, match="job 83017637 has no POSIX record"):
        read(log("noposix"))


def test_a_file_over_the_cap_is_not_read(tmp_path: Path) -> None:
    with pytest.raises(LogUnreadable, match="The file is 0.1 MiB, more than the 0.0 MiB"):
        parse(log("small-files"), seconds=20, memory_bytes=768 * 2**20, max_bytes=2**20 // 32)


def test_the_reader_runs_within_its_memory_limit() -> None:
    # Far too little for numpy: the child's RLIMIT_AS holds, the caller hears why.
    with pytest.raises(LogUnreadable, match="could not start within its 40 MiB of memory"):
        parse(log("example"), seconds=20, memory_bytes=40 * 2**20, max_bytes=2**26)


def test_a_reader_over_its_time_limit_is_stopped() -> None:
    # A millisecond: the warm reader read this small log within 10 ms once (a red run).
    with pytest.raises(LogUnreadable, match="longer than 0.001 s"):
        parse(log("example"), seconds=0.001, memory_bytes=768 * 2**20, max_bytes=2**26)
