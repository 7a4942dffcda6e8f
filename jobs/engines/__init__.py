"""Benchmark engines: fio (the default), IOR and mdtest. ENGINES is the one list of them:
the models' choices, the site profile's and the commands' come from it. `parse_output`
is the one way in for a posted output: every caller (the results task, the command)
gets a result or a ResultParseError of one line, whatever the text."""

from jobs.engines.base import (
    PARSE_MAX_CHARS,
    BenchmarkResult,
    Engine,
    Pattern,
    ResultParseError,
    Target,
    Workload,
)
from jobs.engines.fio import Fio
from jobs.engines.ior import Ior
from jobs.engines.mdtest import Mdtest

ENGINES: dict[str, Engine] = {engine.name: engine for engine in (Fio(), Ior(), Mdtest())}
ENGINE_CHOICES = [(name, engine.label) for name, engine in ENGINES.items()]


def get_engine(name: str) -> Engine:
    try:
        return ENGINES[name]
    except KeyError:
        raise ValueError(f"unknown engine {name!r}: choose {', '.join(ENGINES)}") from None


def parse_output(engine: str, output: str) -> BenchmarkResult:
    """The figures in a benchmark's output, or ResultParseError with a reason of one
    line. The output is its job owner's text: beyond PARSE_MAX_CHARS it is not read,
    and whatever else a parser raises on it (a RecursionError from JSON nested too
    deep, an OverflowError from a number too large, or a time limit reached) comes
    out as a ResultParseError too, the exception as its cause."""
    if len(output) > PARSE_MAX_CHARS:
        raise ResultParseError(
            f"{engine} output of {len(output):,} characters is not read: a benchmark's "
            f"output is a few KiB, and at most {PARSE_MAX_CHARS:,} are read"
        )
    parse = get_engine(engine).parse
    try:
        return parse(output)
    except ResultParseError as e:
        raise ResultParseError(one_line(str(e))) from None
    except Exception as e:  # any failure is the output's, said in one line
        raise ResultParseError(
            f"{engine} output could not be read ({type(e).__name__}: {one_line(str(e), 200)})"
        ) from e


def one_line(text: str, limit: int = 500) -> str:
    """`text` on one line, at most `limit` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


__all__ = [
    "ENGINES",
    "ENGINE_CHOICES",
    "BenchmarkResult",
    "Engine",
    "Pattern",
    "ResultParseError",
    "Target",
    "Workload",
    "get_engine",
    "parse_output",
]
