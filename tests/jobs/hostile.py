"""Outputs a trainee could post with their own run's token, shaped to make a parser
slow or raise: per engine, by name, each built at a given size in characters. The
tests (tests/jobs/test_engine_hostile.py) and the bench (bench/test_parsers.py) share
them."""

from collections.abc import Callable


def _fill(head: str, unit: str, tail: str, size: int) -> str:
    """`head`, `unit` repeated, `tail`: `size` characters in all (or a little less)."""
    count = max(0, (size - len(head) - len(tail)) // len(unit))
    return head + unit * count + tail


FIO_HEAD = '{"fio version": "fio-3.33", "jobs": '
FIO_JOB = '{"jobname": "write", "groupid": 0, "error": 0, "write": {"io_bytes": '
IOR_HEAD = '{"Version": "4.0.0", "Began": "now", "summary": ['
MDTEST_HEAD = "mdtest-4.0.0 was launched with 8 total task(s) on 1 node(s)\nSUMMARY rate:\n"
MDTEST_END = "-- finished at 11/24/2026 22:00:00 --\n"

SHAPES: dict[str, dict[str, Callable[[int], str]]] = {
    "fio": {
        # JSON nested beyond Python's recursion limit (RecursionError).
        "deep-nesting": lambda n: _fill(FIO_HEAD, "[", "", n),
        # More digits than Python turns into an int (ValueError).
        "huge-integer": lambda n: _fill(FIO_HEAD + "[" + FIO_JOB, "9", "}}]}", n),
        # A number JSON reads as infinity, then int() of it (OverflowError).
        "infinite-bytes": lambda n: _fill(FIO_HEAD + "[" + FIO_JOB + "1e400}}" + " ", " ", "]}", n),
        # Lines that all look like the start of the JSON.
        "many-openings": lambda n: _fill("fio: starting\n", "\n{", "", n),
        # A job name as long as the output, in a failure the message quotes.
        "long-job-name": lambda n: _fill(FIO_HEAD + '[{"error": 5, "jobname": "', "x", '"}]}', n),
    },
    "ior": {
        # An object opened and never closed, "operation" over and over: the summary
        # fallback's pattern backtracked over the rest at each one.
        "unclosed-operations": lambda n: _fill('{"Version": "4.0.0",\n{', '"operation"', "", n),
        "deep-nesting": lambda n: _fill(IOR_HEAD, "[", "", n),
        "huge-integer": lambda n: _fill(
            IOR_HEAD + '{"operation": "write", "bwMaxMIB": ', "9", "}]}", n
        ),
        "blank-lines-after-error": lambda n: _fill("ior ERROR:", "\n", "x", n),
        "unclosed-keys": lambda n: _fill('{"Version": 4,\n{"operation": "write", ', '"k', "", n),
    },
    "mdtest": {
        # Blank lines in the summary table: "^\s*" spanned all of them from each one.
        "blank-lines": lambda n: _fill(MDTEST_HEAD, "\n", MDTEST_END, n),
        # A row name and blanks, no figures: "\s*:?\s+" split the run in every way.
        "blank-run": lambda n: _fill(MDTEST_HEAD + "File creation", " ", "\n" + MDTEST_END, n),
        # More digits than Python turns into an int, where the rank count is read.
        "huge-task-count": lambda n: _fill(
            "mdtest-4.0.0 was launched with ",
            "9",
            " total task(s)\nSUMMARY rate:\n   File creation : 1 1 1 1\n" + MDTEST_END,
            n,
        ),
        "long-line": lambda n: _fill(
            MDTEST_HEAD + "File creation : ", "1.5 ", "\n" + MDTEST_END, n
        ),
    },
}
