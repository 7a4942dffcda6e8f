"""What the advisor is asked (a job's I/O, the site's targets) and what it answers."""

from dataclasses import dataclass
from enum import StrEnum


@dataclass(frozen=True)
class TargetFacts:
    """One target as the advisor sees it. Figures are MiB/s of writes: sequential in
    large blocks (e.g. exercise 1b) and random in 4 KiB blocks (e.g. 2a or 2b)."""

    key: str
    name: str
    in_memory: bool
    persistent: bool
    shared: bool
    use_for: tuple[str, ...] = ()
    avoid_for: tuple[str, ...] = ()
    sequential_mib_s: float | None = None
    random_mib_s: float | None = None
    quota_gib: float | None = None
    filesystem: str = ""  # "Lustre 2.1", "GlusterFS 11.2": how it stripes a file
    # Where the user's new files are spread over all its servers ("/gluster-wide/USER"),
    # if the site made such a directory for them.
    spread_directory: str = ""
    # A target that compresses what it stores ("zstd, on every write"), and how many
    # times less space the site's runs of data that compresses took there, with where
    # that comes from (exercises/advisor/facts.py: stored_ratios); None: not measured.
    compression: str = ""
    stored_ratio: tuple[float, str] | None = None
    memory_fraction: float = 0.5  # in-memory targets may hold this share of node RAM
    # The figures of the exercise a job resembles (exercises/advisor/job.py), which
    # replace the two above for that job, so that every figure on its page is one of
    # them: job_label names it ("exercise 2a"); empty: none.
    job_mib_s: float | None = None
    job_label: str = ""
    job_source: str = ""  # where job_mib_s comes from, if the caller says
    # False: a hardware failure can lose the data (the profile's redundancy text,
    # read by words.protects). An avoid_for phrase such as "the only copy of data"
    # says the same, for callers that only pass the phrases.
    redundant: bool = True
    redundancy: str = ""  # the profile's words: "none: a single virtual disk"
    # What removes files that outlive the job ("files not accessed for 14 days are
    # removed, every night"); "": nothing does.
    purge: str = ""
    # Where each figure above comes from, as the page quotes it: "exercise 1a, measured
    # here by calibration round 3 on 2 May 2026: the median of 3 runs, ..."
    sequential_source: str = ""
    random_source: str = ""
    # Files created per second by the site's metadata exercise (mdtest's creates).
    create_ops_s: float | None = None
    create_source: str = ""


class Access(StrEnum):
    SEQUENTIAL = "sequential"
    RANDOM = "random"
    MIXED = "mixed"


class FileShape(StrEnum):
    FEW_LARGE = "few_large"
    MANY_SMALL = "many_small"


@dataclass(frozen=True)
class Question:
    access: Access
    file_shape: FileShape
    data_gib: float  # volume the job reads/writes / keeps
    node_memory_gib: float  # memory per node
    app_memory_gib: float = 0  # memory the program itself needs
    must_outlive_job: bool = True
    shared_between_nodes: bool = False
    file_count: int | None = None
    # The share of the job's run time its processes spent in I/O (from its Darshan
    # log; None: not known, as in the questionnaire). A job that is mostly I/O is never
    # "light", however few bytes it moves.
    io_time_share: float | None = None
    # It reads input (from its log: bytes read); None: not asked (the questionnaire),
    # taken as a job with input.
    reads_input: bool | None = None

    def __post_init__(self) -> None:
        if self.data_gib < 0 or self.app_memory_gib < 0:
            raise ValueError("data and program memory cannot be negative")
        if self.node_memory_gib <= 0:
            raise ValueError("a node needs some memory")
        if self.file_count is not None and self.file_count < 0:
            raise ValueError("the file count cannot be negative")


@dataclass(frozen=True)
class Recommendation:
    """One target's verdict. The ranking's order is the answer; score weighs the
    target's suitability regardless of what blocks it (so a target that does not
    fit may score high: it would be the best choice with more memory or quota)."""

    target_key: str
    target_name: str
    score: float
    reasons: tuple[str, ...]
    fits: bool
    # What the job's I/O would cost here, copies to a target that keeps results
    # included (None: no figure to count it by), that cost in words with its figures,
    # and each figure it was counted by with its source and date.
    seconds: float | None = None
    cost: str = ""
    figures: tuple[str, ...] = ()
    quota_share: float | None = None  # of the default quota the data would take
    full: bool = False  # it would take more than TIGHT_QUOTA of it: no room left
    keeps_results: bool = True  # what the job must keep outlives it here


@dataclass(frozen=True)
class Advice:
    ranking: tuple[Recommendation, ...]  # best first; fits=False last
    plan: str


@dataclass(frozen=True)
class ExerciseShape:
    key: str
    title: str
    pattern: str  # "sequential" or "random", as Exercise.pattern
    block_size: int
    processes: int
    files_per_process: int
    fsync: bool = True
    reads: bool = False  # it reads its data back: it has read figures
    shared_file: bool = False  # every process writes its part of one file
    engine: str = ""  # the benchmark's program (fio, ior): breaks ties between twins
    mpi_io: bool = False  # through MPI-IO's calls
    collective: bool = False  # MPI-IO's collective calls (collective buffering)
    spread: bool = False  # written where the target spreads each file over its servers
