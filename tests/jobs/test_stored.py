"""What a run's files took on a target that compresses, as the job adds it to the
output it posts (jobs/stored.py): two bounded numbers, or nothing."""

from pathlib import Path

import pytest

from jobs.engines import parse_output
from jobs.stored import HELD_MAX, Space, space_of
from portal.units import MiB

SAMPLES = Path(__file__).parent / "samples"
FIO_JSON = '{"fio version": "fio-3.39", "jobs": []}\n'


def test_the_last_space_line_after_the_benchmarks_output_is_the_runs() -> None:
    output = (
        FIO_JSON
        + "Storage Lab: stored 1 of 2 bytes\n"
        + "Storage Lab: stored 58720256 of 134217728 bytes\n"
    )
    space = space_of(output)
    assert space == Space(held=128 * MiB, stored=56 * MiB)
    assert round(space.ratio, 2) == 2.29


@pytest.mark.parametrize(
    "line",
    [
        "Storage Lab: stored -1 of 2 bytes",  # no number
        "Storage Lab: stored 5 of 0 bytes",  # nothing written
        f"Storage Lab: stored 1 of {HELD_MAX + 1} bytes",  # more than any run writes
        "Storage Lab: stored 999999999999 of 1000 bytes",  # far more stored than held
        "Storage Lab: stored 1 of 99999999999999999 bytes",  # a number too long
        "xStorage Lab: stored 1 of 2 bytes",  # not a line of its own
    ],
)
def test_a_space_that_cannot_be_true_is_no_space(line: str) -> None:
    assert space_of(FIO_JSON + line + "\n") is None


def test_an_output_without_a_space_line_has_no_space() -> None:
    assert space_of(FIO_JSON) is None
    assert space_of("Storage Lab: stored\n" * 100_000) is None


@pytest.mark.parametrize(
    ("engine", "sample"),
    [
        ("fio", "fio-seq-write-1p.json"),
        ("ior", "ior-4.1-seq-1p-write-read.json"),
        ("ior", "ior-4.1-seq-1p-write-read.txt"),
        ("mdtest", "mdtest-4.1-files-1p.txt"),
    ],
)
def test_each_engine_reads_its_figures_whatever_space_line_follows_them(engine, sample) -> None:
    """Any run on a target that compresses gets the line, whichever its engine."""
    output = (SAMPLES / sample).read_text()
    line = "Storage Lab: stored 58720256 of 134217728 bytes\n"
    assert parse_output(engine, output + line) == parse_output(engine, output)
