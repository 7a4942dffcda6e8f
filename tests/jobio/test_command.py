"""manage.py advise_darshan on real logs, with VSC-3's profile loaded."""

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from tests.jobio.logs import log, not_a_log, partial, truncated


def advise(path: Path, *extra: str) -> dict:
    out = StringIO()
    call_command("advise_darshan", str(path), "--profile", "vsc3", "--json", *extra, stdout=out)
    return json.loads(out.getvalue())


def test_heavy_random_4k_writes_that_fit_in_memory_go_to_tmpdir_first(vsc3) -> None:
    answer = advise(log("random-4k"))
    assert answer["pattern"] == "random"
    assert (answer["files"], answer["bytes_written"], answer["bytes_read"]) == (1, 64 * 2**20, 0)
    assert answer["typical_request_bytes"] == 4096
    assert answer["resembles"] == "2a"
    assert answer["ranking"][0] == "tmp"
    assert sorted(answer["ranking"]) == ["binfl", "binfs", "global", "home", "tmp"]
    assert answer["plan"].startswith("Write in $TMPDIR while the job runs")  # no input
    assert answer["speedup"].startswith("Expect $TMPDIR to be about 25× faster than $GLOBAL")


def test_a_large_1_mib_sequential_write_goes_to_a_parallel_filesystem_first(vsc3) -> None:
    answer = advise(log("sequential-1m"))
    assert answer["pattern"] == "sequential"
    assert answer["typical_request_bytes"] == 2**20
    assert answer["bytes_written"] == 2 * 2**30
    assert answer["resembles"] == "1a"
    first = vsc3.targets.get(key=answer["ranking"][0])
    assert first.filesystem == "BeeGFS" and first.shared and not first.in_memory


def test_many_small_files_stay_off_the_parallel_filesystems(vsc3) -> None:
    answer = advise(log("small-files"))
    assert (answer["pattern"], answer["files"], answer["resembles"]) == ("sequential", 1000, "3")
    assert answer["ranking"][0] in ("tmp", "binfs")


def test_the_wheels_mpi_example_is_advised_too(vsc3) -> None:
    answer = advise(log("example"))
    assert answer["files"] == 1 and answer["typical_request_bytes"] == 128 * 2**20
    assert answer["ranking"][0] != "tmp"  # 2 TiB do not fit in a node's memory


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (not_a_log, "This is not a Darshan log"),
        (lambda tmp: truncated(tmp, "example", 0.6), "cut short or damaged"),
        (lambda tmp: log("noposix"), "has no POSIX record"),
    ],
)
def test_a_file_that_is_no_readable_log_exits_with_one_line(vsc3, tmp_path, make, says) -> None:
    with pytest.raises(CommandError, match=says) as failed:
        advise(make(tmp_path))
    assert "\n" not in str(failed.value)


def test_an_unknown_profile_says_how_to_load_it(vsc3) -> None:
    with pytest.raises(CommandError, match="runs: python manage.py load_site_profile tacc"):
        call_command("advise_darshan", str(log("example")), "--profile", "tacc", "--json")


def test_a_partial_log_says_so_and_a_whole_one_says_it_is_not(vsc3, tmp_path) -> None:
    whole, cut_off = advise(log("small-files")), advise(partial(tmp_path))

    assert whole["partial"] is False
    assert cut_off["partial"] is True
    # Advised on what it recorded: the same job, told that it is part of it.
    assert cut_off["files"] == whole["files"] == 1000
    out = StringIO()
    call_command("advise_darshan", str(partial(tmp_path)), "--profile", "vsc3", stdout=out)
    assert "This log is partial: Darshan ran out of room for records" in out.getvalue()


def test_the_io_time_share_is_of_the_jobs_run_time(vsc3) -> None:
    answer = advise(log("small-files"))
    # fio's processes spent 0.59 s of its 0.91 s in opening, writing and closing.
    assert answer["io_time_share"] == pytest.approx(0.647, abs=0.001)
