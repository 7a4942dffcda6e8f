"""Outputs posted to make a parser slow or crash (tests/jobs/hostile.py) get a parse
error of one line, at a bounded cost: each is parsed at 1 MiB in a child process given
10 s (the parsers take milliseconds; the ones before took hours on some of these, and
a regex cannot be interrupted inside its own process). The bench times them at 1 and
4 MiB (bench/test_parsers.py)."""

import multiprocessing
import subprocess
import sys
from pathlib import Path

import pytest

from jobs.engines import ResultParseError, parse_output
from jobs.engines.base import PARSE_MAX_CHARS, MiB
from tests.jobs.hostile import SHAPES

BOUND_SECONDS = 10
MANAGE_PY = Path(__file__).resolve().parents[2] / "manage.py"
CASES = [(engine, shape) for engine, shapes in SHAPES.items() for shape in shapes]


def _parse_in_child(engine: str, output: str, answers: multiprocessing.Queue) -> None:
    try:
        parse_output(engine, output)
        answers.put(("result", ""))
    except ResultParseError as e:
        answers.put(("refused", str(e)))
    except BaseException as e:  # what the test must not see
        answers.put(("raised", f"{type(e).__name__}: {e}"[:300]))


def parse_bounded(engine: str, output: str) -> tuple[str, str]:
    """What parse_output did with `output`, in a forked child killed after the bound."""
    context = multiprocessing.get_context("fork")
    answers = context.Queue()
    child = context.Process(target=_parse_in_child, args=(engine, output, answers))
    child.start()
    child.join(BOUND_SECONDS)
    if child.is_alive():
        child.kill()
        child.join()
        return ("timeout", f"still parsing after {BOUND_SECONDS} s")
    return answers.get(timeout=5)


@pytest.mark.parametrize(("engine", "shape"), CASES, ids=[f"{e}-{s}" for e, s in CASES])
def test_a_hostile_output_is_a_one_line_parse_error_at_a_bounded_cost(engine, shape) -> None:
    output = SHAPES[engine][shape](1 * MiB)

    kind, message = parse_bounded(engine, output)

    assert kind == "refused", message
    assert "\n" not in message and len(message) <= 500


@pytest.mark.parametrize("engine", list(SHAPES))
def test_an_output_beyond_what_a_parser_reads_is_refused_unread(engine) -> None:
    with pytest.raises(ResultParseError, match="is not read"):
        parse_output(engine, "x" * (PARSE_MAX_CHARS + 1))


def test_the_command_answers_a_hostile_file_in_one_line_without_a_traceback(tmp_path) -> None:
    crafted = tmp_path / "deep.json"
    crafted.write_text(SHAPES["fio"]["deep-nesting"](64 * 1024))
    binary = tmp_path / "binary.out"
    binary.write_bytes(bytes(range(256)) * 1000)

    for path in (crafted, binary, tmp_path):  # a directory too
        done = subprocess.run(
            [sys.executable, str(MANAGE_PY), "parse_result", "--engine", "fio", str(path)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode != 0
        assert "Traceback" not in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert done.stderr.startswith("error: ")
