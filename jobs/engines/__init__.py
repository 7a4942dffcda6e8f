"""Benchmark engines: fio (the default), IOR and mdtest. ENGINES is the one list of them:
the models' choices, the site profile's and the commands' come from it."""

from jobs.engines.base import (
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
]
