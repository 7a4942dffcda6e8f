"""What every benchmark engine offers: a command line for a workload, and a parser
that turns the engine's output into one normalized result."""

from enum import StrEnum
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from jobs.figures import BANDWIDTH_FIELDS, RATE_FIELDS, figure, plausible, series_figures
from portal.units import GiB, KiB, MiB, mb

# The most pieces a process's share may be written in (IOR's segments).
SEGMENTS_MAX = 100_000
# The most request sizes one run writes with, one after the other (a sweep).
SWEEP_MAX = 8
# The most times one run makes, reads and removes its files over (mdtest's iterations).
ITERATIONS_MAX = 100


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
    # Past the page cache (O_DIRECT) where the target has one: each request reaches the
    # device, as it does on a parallel filesystem's clients with little cache. Not on
    # a target in memory, whose page cache is the storage.
    direct: bool = False
    # Time-based: write for this many seconds, over the files again and again, instead
    # of once through them: a figure over seconds, not over milliseconds of a timer.
    # With read_back, each phase for this long; IOR goes through its bytes again until
    # it has (at least once through them); mdtest stops making files after it, and the
    # phases after it work on the files it made.
    seconds: int | None = Field(default=None, ge=1, le=600)
    # Only reads, timed, of files laid out before the clock starts (fio lays them out,
    # then reads them, past the page cache where `direct`): a job that read data it did
    # not write. Its figure is a read figure; no write is timed.
    read_only: bool = False
    # The files made, read and removed this many times over (mdtest's iterations): a
    # run of a few files lasts long enough on a fast target without more files at once.
    iterations: int = Field(default=1, ge=1, le=ITERATIONS_MAX)
    # MPI-IO (IOR's MPIIO backend) instead of POSIX calls, and with it collective calls:
    # every rank writes together, and a few aggregators gather their small pieces into
    # large contiguous requests (collective buffering) before the filesystem sees them.
    mpi_io: bool = False
    collective: bool = False
    # Each process writes its share in this many pieces, the processes' pieces taking
    # turns in the file (IOR's segments): one shared file interleaved rank by rank.
    segments: int = Field(default=1, ge=1, le=SEGMENTS_MAX)
    # The nodes its processes spread over (a target every node sees; one node's own
    # directory keeps them on one).
    nodes: int = Field(default=1, ge=1, le=64)
    # A sweep of request sizes: the same stream written with each of these in turn,
    # `seconds` each, smallest first (fio). The run's figure is the largest size's,
    # block_size; each size's figure is kept too (BenchmarkResult.series).
    block_sizes: tuple[int, ...] = Field(default=(), max_length=SWEEP_MAX)
    # What its data is like: None, the engine's own (random bytes); a number, the
    # percent of each buffer that compresses away (fio's zeros; 0: random bytes), fresh
    # for every write as a program's output is. On a compressing filesystem random
    # bytes take all their space, the others about (100 - N) % of it (11a and 11b).
    compressible: int | None = Field(default=None, ge=0, le=95)

    @model_validator(mode="after")
    def _sizes_fit(self) -> "Workload":
        if self.block_sizes:
            self._sweep_fits()
        if self.size_per_process % self.block_size:
            raise ValueError("size_per_process must be a multiple of block_size")
        if self.size_per_process % (self.segments * self.block_size):
            raise ValueError("size_per_process must be a multiple of segments x block_size")
        if self.collective and not self.mpi_io:
            raise ValueError("collective calls are MPI-IO's: set mpi_io too")
        if self.nodes > self.processes:
            raise ValueError("more nodes than processes: some nodes would have none")
        if self.files_per_process > 1 and not self.file_per_process:
            raise ValueError("many small files need file_per_process")
        if (self.size_per_process // self.files_per_process) < self.block_size:
            raise ValueError("each file must hold at least one block")
        if self.read_only and self.read_back:
            raise ValueError("a run that only reads has no writes to read back")
        return self

    def _sweep_fits(self) -> None:
        sizes = self.block_sizes
        if len(sizes) < 2 or list(sizes) != sorted(set(sizes)):
            raise ValueError("block_sizes: two sizes or more, each once, smallest first")
        if not all(512 <= size <= 64 * MiB for size in sizes):
            raise ValueError("block_sizes: each from 512 bytes to 64 MiB")
        if sizes[-1] != self.block_size:
            raise ValueError("block_size is the sweep's largest size, its figure the run's")
        if any(self.size_per_process % size for size in sizes):
            raise ValueError("size_per_process must be a multiple of every size of the sweep")
        if not self.seconds:
            raise ValueError("a sweep writes each size for `seconds`: set seconds")
        if (
            self.read_back
            or self.read_only
            or self.files_per_process > 1
            or not self.file_per_process
        ):
            raise ValueError("a sweep writes one file per process, and reads nothing back")


class Target(BaseModel):
    """Where the benchmark runs: a fresh directory on the storage target."""

    model_config = ConfigDict(frozen=True)

    directory: str  # absolute path of the run's own directory
    tmpfs: bool = False  # in memory: O_DIRECT bypasses nothing (and older kernels refuse it)


# The most of a posted output a parser reads (RESULT_MAX_BYTES' default): the outputs
# of the engines' commands are a few KiB; a parser reads this much in well under a
# second (bench/test_parsers.py).
PARSE_MAX_CHARS = 4 * MiB


def validation_reason(error: ValidationError) -> str:
    """A pydantic error in one line: 'field: what is wrong; ...'."""
    parts = []
    for problem in error.errors():
        where = ".".join(str(part) for part in problem["loc"])
        parts.append(f"{where}: {problem['msg']}" if where else problem["msg"])
    return "; ".join(parts)


class Latency(BaseModel):
    """Completion latency percentiles in microseconds."""

    model_config = ConfigDict(frozen=True, allow_inf_nan=False)

    p50: float | None = Field(default=None, ge=0)
    p95: float | None = Field(default=None, ge=0)
    p99: float | None = Field(default=None, ge=0)
    max: float | None = Field(default=None, ge=0)


class BenchmarkResult(BaseModel):
    """One benchmark's figures, engine-independent. Throughput in bytes/s.

    Every figure is a finite number that hardware can deliver: a job's output is
    posted by the job, so NaN, an infinity, a negative or an absurd bandwidth is a
    forged or garbled output, never a figure (use `result()` to build one)."""

    model_config = ConfigDict(frozen=True, allow_inf_nan=False)

    engine: str
    processes: int = Field(ge=1, le=100_000)
    write_bytes_per_s: float | None = Field(default=None, gt=0)
    read_bytes_per_s: float | None = Field(default=None, gt=0)
    write_iops: float | None = Field(default=None, ge=0)
    read_iops: float | None = Field(default=None, ge=0)
    write_latency: Latency | None = None
    read_latency: Latency | None = None
    # Files created, stat'ed, read and removed per second, all processes together.
    create_ops_s: float | None = Field(default=None, gt=0)
    stat_ops_s: float | None = Field(default=None, gt=0)
    read_ops_s: float | None = Field(default=None, gt=0)
    remove_ops_s: float | None = Field(default=None, gt=0)
    # A sweep's figures (Workload.block_sizes): (request bytes, write bytes/s), smallest
    # request first; write_bytes_per_s is the largest request's.
    series: tuple[tuple[int, float], ...] | None = Field(default=None, max_length=SWEEP_MAX)

    @model_validator(mode="after")
    def _within_hardware(self) -> "BenchmarkResult":
        for size, bytes_per_s in self.series or ():
            if not (size > 0 and bytes_per_s > 0) or not plausible(
                "write_bytes_per_s", bytes_per_s, self.processes
            ):
                raise ValueError(f"series: {bytes_per_s:.3g} bytes/s at {size} bytes is no figure")
        for name in BANDWIDTH_FIELDS:
            bytes_per_s = getattr(self, name)
            if bytes_per_s is not None and not plausible(name, bytes_per_s, self.processes):
                direction = name.removesuffix("_bytes_per_s")
                raise ValueError(
                    f"{direction} bandwidth of {bytes_per_s / self.processes:.3g} bytes/s "
                    "per process is beyond any storage"
                )
        for name in RATE_FIELDS:
            ops_s = getattr(self, name)
            if ops_s is not None and not plausible(name, ops_s, self.processes):
                operation = name.removesuffix("_ops_s")
                raise ValueError(
                    f"{ops_s / self.processes:.3g} {operation} operations/s per process "
                    "is beyond any storage"
                )
        return self

    @property
    def write_mib_s(self) -> float | None:
        return figure("write_bytes_per_s", self.write_bytes_per_s, self.processes)

    @property
    def read_mib_s(self) -> float | None:
        return figure("read_bytes_per_s", self.read_bytes_per_s, self.processes)

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
            **{name: getattr(self, name) for name in RATE_FIELDS},
            **({"series_mib_s": self.series_mib_s} if self.series else {}),
        }

    @property
    def series_mib_s(self) -> list[tuple[int, float | None]]:
        """The sweep's figures as shown: (request bytes, MiB/s)."""
        return series_figures(self.series, self.processes)


class ResultParseError(ValueError):
    """The output is not a complete result of this engine (truncated, garbled,
    empty, or an error message). The message says which, in one line."""


def result(**figures: object) -> BenchmarkResult:
    """The figures a parser read, or ResultParseError if they cannot be true."""
    try:
        return BenchmarkResult(**figures)
    except ValidationError as e:
        raise ResultParseError(
            f"{figures.get('engine', 'the benchmark')} output has an impossible value "
            f"({validation_reason(e)})"
        ) from None


class Engine(Protocol):
    name: str  # as stored and typed in profiles
    label: str  # as shown
    metadata: bool  # its figures are file operations per second, not bandwidth

    def command(self, workload: Workload, target: Target) -> list[str]:
        """The argv that runs `workload` in `target.directory` (the job's cwd)."""
        ...

    def tasks(self, workload: Workload) -> int:
        """Slurm tasks the job needs (1 for fio, which forks; N MPI ranks for IOR and
        mdtest)."""
        ...

    def parse(self, output: str) -> BenchmarkResult:
        """Raises ResultParseError on anything but a complete result."""
        ...
