"""What every benchmark engine offers: a command line for a workload, and a parser
that turns the engine's output into one normalized result."""

from enum import StrEnum
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field, model_validator

from portal.units import GiB, KiB, MiB, ThroughputInMiB, mb


class Pattern(StrEnum):
    SEQUENTIAL = "sequential"
    RANDOM = "random"


class Workload(BaseModel):
    """An exercise's I/O parameters. Typed and bounded: these are the only values
    that reach a job script."""

    model_config = ConfigDict(frozen=True)

    pattern: Pattern
    block_size: int = Field(ge=512, le=64 * MiB)  # bytes per I/O (transfer size)
    processes: int = Field(ge=1, le=64)
    size_per_process: int = Field(ge=64 * KiB, le=64 * GiB)  # bytes each process writes
    file_per_process: bool = True  # else all processes share one file
    fsync: bool = True  # flush to the device before the clock stops
    read_back: bool = False  # read the data back after writing it
    files_per_process: int = Field(default=1, ge=1, le=100_000)  # > 1: many small files

    @model_validator(mode="after")
    def _sizes_fit(self) -> "Workload":
        if self.size_per_process % self.block_size:
            raise ValueError("size_per_process must be a multiple of block_size")
        if self.files_per_process > 1 and not self.file_per_process:
            raise ValueError("many small files need file_per_process")
        if (self.size_per_process // self.files_per_process) < self.block_size:
            raise ValueError("each file must hold at least one block")
        return self


class Target(BaseModel):
    """Where the benchmark runs: a fresh directory on the storage target."""

    model_config = ConfigDict(frozen=True)

    directory: str  # absolute path of the run's own directory
    tmpfs: bool = False  # no O_DIRECT on tmpfs


class Latency(BaseModel):
    """Completion latency percentiles in microseconds."""

    model_config = ConfigDict(frozen=True)

    p50: float | None = None
    p95: float | None = None
    p99: float | None = None
    max: float | None = None


class BenchmarkResult(ThroughputInMiB, BaseModel):
    """One benchmark's figures, engine-independent. Throughput in bytes/s."""

    model_config = ConfigDict(frozen=True)

    engine: str
    processes: int
    write_bytes_per_s: float | None = None
    read_bytes_per_s: float | None = None
    write_iops: float | None = None
    read_iops: float | None = None
    write_latency: Latency | None = None
    read_latency: Latency | None = None

    def summary(self) -> dict[str, object]:
        """The shape `manage.py parse_result` prints."""
        return {
            "engine": self.engine,
            "processes": self.processes,
            "write_mib_s": self.write_mib_s,
            "read_mib_s": self.read_mib_s,
            "write_mb_s": mb(self.write_bytes_per_s),
            "read_mb_s": mb(self.read_bytes_per_s),
            "write_iops": self.write_iops,
            "read_iops": self.read_iops,
            "write_latency_us": self.write_latency.model_dump() if self.write_latency else None,
            "read_latency_us": self.read_latency.model_dump() if self.read_latency else None,
        }


class ResultParseError(ValueError):
    """The output is not a complete result of this engine (truncated, garbled,
    empty, or an error message). The message says which, in one line."""


class Engine(Protocol):
    name: str  # as stored and typed in profiles
    label: str  # as shown

    def command(self, workload: Workload, target: Target) -> list[str]:
        """The argv that runs `workload` in `target.directory` (the job's cwd)."""
        ...

    def tasks(self, workload: Workload) -> int:
        """Slurm tasks the job needs (1 for fio, which forks; N MPI ranks for IOR)."""
        ...

    def parse(self, output: str) -> BenchmarkResult:
        """Raises ResultParseError on anything but a complete result."""
        ...
