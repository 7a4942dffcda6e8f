"""`manage.py parse_result`: a saved benchmark output, normalized, from a shell."""

import json
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

SAMPLES = Path(__file__).parent / "samples"
MANAGE_PY = Path(__file__).resolve().parents[2] / "manage.py"


def parse_result(*args: str) -> dict:
    out = StringIO()
    call_command("parse_result", *args, stdout=out)
    return json.loads(out.getvalue())


def test_it_prints_a_fio_result_as_json_with_null_where_absent() -> None:
    summary = parse_result("--engine", "fio", str(SAMPLES / "fio-seq-write-8p.json"))

    assert summary["engine"] == "fio"
    assert summary["processes"] == 8
    assert summary["write_mib_s"] > 0
    assert summary["write_iops"] > 0
    assert summary["read_mib_s"] is None
    assert summary["read_iops"] is None
    assert set(summary["write_latency_us"]) == {"p50", "p95", "p99", "max"}


def test_it_prints_an_ior_result_in_mib_per_second() -> None:
    summary = parse_result("--engine", "ior", str(SAMPLES / "ior-3.3.0-write-read.txt"))

    assert summary["engine"] == "ior"
    assert summary["processes"] == 4
    assert summary["write_mib_s"] == pytest.approx(237.37)
    assert summary["read_mib_s"] == pytest.approx(1011.52)
    assert summary["write_latency_us"] is None


def test_it_prints_mdtests_operations_per_second() -> None:
    summary = parse_result("--engine", "mdtest", str(SAMPLES / "mdtest-4.1-files-8p.txt"))

    assert summary["engine"] == "mdtest"
    assert summary["processes"] == 8
    assert summary["create_ops_s"] == pytest.approx(5208.282)
    assert summary["stat_ops_s"] == pytest.approx(29409.076)
    assert summary["read_ops_s"] == pytest.approx(36436.564)
    assert summary["remove_ops_s"] == pytest.approx(12140.622)
    assert summary["write_mib_s"] is None


def test_the_metadata_figures_of_a_bandwidth_engine_are_null() -> None:
    summary = parse_result("--engine", "ior", str(SAMPLES / "ior-4.1-seq-8p-write-read.json"))

    assert summary["processes"] == 8
    assert summary["write_mib_s"] > 0 and summary["read_mib_s"] > 0
    assert [summary[f"{op}_ops_s"] for op in ("create", "stat", "read", "remove")] == [None] * 4


def test_a_missing_file_is_a_command_error() -> None:
    with pytest.raises(CommandError, match="cannot read .*: No such file or directory"):
        parse_result("--engine", "fio", str(SAMPLES / "no-such-output.json"))


def test_an_output_that_does_not_parse_is_a_command_error(tmp_path: Path) -> None:
    cut = tmp_path / "cut.json"
    cut.write_text((SAMPLES / "fio-seq-write-1p.json").read_text()[:2000])

    with pytest.raises(CommandError, match=r"truncated\?"):
        parse_result("--engine", "fio", str(cut))


def test_an_unknown_engine_is_refused() -> None:
    with pytest.raises(CommandError, match="invalid choice"):
        parse_result("--engine", "dd", str(SAMPLES / "fio-seq-write-1p.json"))


def manage(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(MANAGE_PY), "parse_result", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_from_a_shell_it_prints_the_json_and_exits_0() -> None:
    done = manage("--engine", "ior", str(SAMPLES / "ior-4.0.0-verbose-summary-invalid.json"))

    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["processes"] == 8


def test_from_a_shell_an_mdtest_output_prints_its_four_rates() -> None:
    done = manage("--engine", "mdtest", str(SAMPLES / "mdtest-4.1-files-1p.txt"))

    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["processes"] == 1
    assert all(summary[f"{op}_ops_s"] > 0 for op in ("create", "stat", "read", "remove"))


@pytest.mark.parametrize(
    ("engine", "name", "marker", "reason"),
    [
        ("mdtest", "mdtest-4.1-files-8p.txt", "File read", "ends before its '-- finished at'"),
        ("ior", "ior-4.1-seq-8p-write-read.txt", "read         1580", "table is complete"),
    ],
    ids=["mdtest", "ior-4.1-text"],
)
def test_from_a_shell_a_truncated_output_is_one_line_and_status_1(
    tmp_path: Path, engine: str, name: str, marker: str, reason: str
) -> None:
    output = (SAMPLES / name).read_text()
    cut = tmp_path / name
    cut.write_text(output[: output.index(marker)])

    done = manage("--engine", engine, str(cut))

    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith("error: ") and reason in done.stderr


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("no-such-output.json", "cannot read"),
        ("fio-job-error.txt", "failed: Is a directory"),
        ("ior-3.3.0-open-error.txt", "IOR failed"),
        ("ior-4.1-open-error-8p.txt", "IOR failed"),
        ("mdtest-4.1-error-8p.txt", "mdtest failed"),
    ],
)
def test_from_a_shell_an_unreadable_output_is_one_error_line_and_status_1(
    name: str, reason: str
) -> None:
    engine = name.split("-")[0] if not name.startswith("no-") else "fio"

    done = manage("--engine", engine, str(SAMPLES / name))

    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith("error: ")
    assert reason in done.stderr
