"""Benchmark engines: fio (the default) and IOR."""

from jobs.engines.base import (
    BenchmarkResult,
    Engine,
    Pattern,
    ResultParseError,
    Target,
    Workload,
)


def get_engine(name: str) -> Engine:
    from jobs.engines.fio import Fio
    from jobs.engines.ior import Ior

    engines: dict[str, Engine] = {"fio": Fio(), "ior": Ior()}
    try:
        return engines[name]
    except KeyError:
        raise ValueError(f"unknown engine {name!r}: choose fio or ior") from None


ENGINE_NAMES = ("fio", "ior")

__all__ = [
    "ENGINE_NAMES",
    "BenchmarkResult",
    "Engine",
    "Pattern",
    "ResultParseError",
    "Target",
    "Workload",
    "get_engine",
]
