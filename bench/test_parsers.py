"""`make bench`: what a hostile output costs to parse, written to
bench/results/parsers.json.

Every shape of tests/jobs/hostile.py (outputs a trainee could post with their own
run's token to make a parser slow or raise), for each engine, at 1 MiB and at 4 MiB
(PARSE_MAX_CHARS, the most a parser reads), through `parse_output` as the results
worker calls it: the best of three, in seconds. Target, asserted: under 1 s each.
Pure CPU in this process: no database, cluster or worker.
"""

import contextlib
import os
import time
from datetime import UTC, datetime

import pytest

from bench.conftest import write_results
from jobs.engines import ResultParseError, parse_output
from jobs.engines.base import PARSE_MAX_CHARS, MiB
from tests.jobs.hostile import SHAPES

TARGET_SECONDS = 1.0
SIZES = {"1 MiB": 1 * MiB, "4 MiB": PARSE_MAX_CHARS}
FIGURES: dict = {"measured_at": datetime.now(UTC).isoformat(), "target_s": TARGET_SECONDS}


def best_of(repeat: int, engine: str, output: str) -> float:
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        with contextlib.suppress(ResultParseError):
            parse_output(engine, output)
        times.append(time.perf_counter() - began)
    return min(times)


@pytest.fixture(scope="module", autouse=True)
def report():
    yield
    FIGURES["load_average"] = os.getloadavg()
    write_results("parsers", FIGURES)
    print("\nhostile outputs, seconds to parse (best of 3):")
    for engine, shapes in FIGURES["seconds"].items():
        for shape, sizes in shapes.items():
            row = "  ".join(f"{size} {s:.4f}" for size, s in sizes.items())
            print(f"  {engine:7} {shape:26} {row}")


@pytest.mark.parametrize("engine", list(SHAPES))
def test_hostile_outputs_parse_in_under_a_second(engine) -> None:
    seconds = FIGURES.setdefault("seconds", {}).setdefault(engine, {})
    for shape, make in SHAPES[engine].items():
        for size_name, size in SIZES.items():
            output = make(size)
            assert len(output) <= PARSE_MAX_CHARS  # read, not refused unread
            seconds.setdefault(shape, {})[size_name] = best_of(3, engine, output)
    slow = {
        f"{shape} {size}": s
        for shape, sizes in seconds.items()
        for size, s in sizes.items()
        if s >= TARGET_SECONDS
    }
    assert not slow, f"{engine}: over {TARGET_SECONDS} s: {slow}"
