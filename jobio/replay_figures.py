"""What a replay's runs say in the job's terms: per target, the replay's own seconds and
rate, the job's whole I/O at that rate (its bytes divided by it, or its files by the
files a second), the staging a node's own storage adds, and where the measurement and
Check my job's rules part.

The job's time is an extrapolation and says so: the replay keeps what decides a
target's speed (replay.py), not the job's compute between requests, so the figure is
the job's time in I/O, not its run time.
"""

from dataclasses import dataclass

from django.conf import settings

from exercises.advisor.facts import advice_for
from exercises.advisor.job_io import JobIO
from exercises.catalogue.models import Metric, SiteProfile, StorageTarget
from exercises.catalogue.site_figures import for_exercise
from jobio.models import Replay
from jobs.engines import Workload
from jobs.models import BenchmarkRun, RunStatus
from portal.units import MiB, iec, spoken_seconds


@dataclass(frozen=True)
class Staging:
    """Copying the job's input onto a node's own storage and its output back."""

    bytes_in: int
    bytes_out: int
    mib_s: float  # the rate of the fastest shared target's streaming figure
    source: str  # "$SCRATCH's 996 MiB/s, exercise 1a's median measured here ..."

    @property
    def seconds(self) -> float:
        return (self.bytes_in + self.bytes_out) / (self.mib_s * MiB)


@dataclass(frozen=True)
class Measured:
    """One target's replay run and what it says of the job."""

    target: StorageTarget
    run: BenchmarkRun
    seconds: float | None = None  # the replay's own time in I/O
    mib_s: float | None = None  # written (or, mdtest, the files' bytes) per second
    read_mib_s: float | None = None
    ops_s: float | None = None  # files created per second (mdtest)
    job_io_seconds: float | None = None  # the job's I/O at these rates
    staging: Staging | None = None  # a node's own storage: in and out
    scale: float | None = None  # the job's I/O per unit of the replay's

    @property
    def scale_said(self) -> str:
        """How the job's I/O stands to the replay's: "your job's is 20× the replay's"."""
        if not self.scale:
            return ""
        if self.scale >= 1:
            return f"your job's is {_times(self.scale)} the replay's"
        return f"the replay moved {_times(1 / self.scale)} your job's"

    @property
    def total_seconds(self) -> float | None:
        if self.job_io_seconds is None:
            return None
        return self.job_io_seconds + (self.staging.seconds if self.staging else 0)


def _times(ratio: float) -> str:
    return f"{ratio:,.1f}×" if ratio < 10 else f"{ratio:,.0f}×"


@dataclass(frozen=True)
class Answer:
    rows: list[Measured]
    going: bool  # a run is unfinished: the page keeps following
    fastest: Measured | None  # the least time for the job's I/O, staging counted
    verdict: str  # the measurement beside the rules, once every run ended
    agrees: bool | None  # None while there is nothing to compare
    chart: dict
    staged: str  # how staging onto a node's own storage is counted, where it is


def answer(replay: Replay, profile: SiteProfile) -> Answer:
    """The replay's runs, each in the job's terms (2 queries, and the site's figures)."""
    io = JobIO.from_json(replay.check_of.io)
    workload = Workload.model_validate(replay.workload)
    runs = list(
        replay.runs.select_related("target", "result").order_by("target__order", "target_id")
    )
    staging = _staging(io, profile)
    rows = [_measured(run, io, replay, workload, staging) for run in runs]
    going = any(run.is_unfinished or run.figure_pending for run in runs)
    timed = [row for row in rows if row.total_seconds is not None]
    fastest = min(timed, key=lambda row: row.total_seconds) if timed else None
    verdict, agrees = ("", None)
    if not going and fastest is not None and len(timed) >= 2:
        verdict, agrees = _beside_the_rules(io, profile, fastest, timed)
    return Answer(rows, going, fastest, verdict, agrees, _chart(rows), _staged(rows, staging))


def _staged(rows: list[Measured], staging: Staging | None) -> str:
    """How staging onto a node's own storage is counted, or why it is not."""
    local = [row.target.name for row in rows if row.run.node_local]
    if not local:
        return ""
    names = f"{' and '.join(local)} {'is' if len(local) == 1 else 'are'} a node's own storage"
    if staging is None:
        return (
            f"{names}: staging your job's input there and its results back is not counted "
            "above, as this site has no streaming figure of its shared targets yet (a "
            "calibration round measures one)."
        )
    copies = []
    if staging.bytes_in:
        copies.append(f"copy its {iec(staging.bytes_in)} of input there first")
    if staging.bytes_out:
        copies.append(f"copy its {iec(staging.bytes_out)} of results back after")
    return f"{names}: your job would {' and '.join(copies)}, counted at {staging.source}."


def _measured(
    run: BenchmarkRun, io: JobIO, replay: Replay, workload: Workload, staging: Staging | None
) -> Measured:
    result = getattr(run, "result", None)
    if run.status != RunStatus.COMPLETED or result is None:
        return Measured(run.target, run)
    node_local = staging if run.node_local and staging else None
    if replay.engine == "mdtest":
        return _files(run, result, io, workload, node_local)
    write, read = result.write_mib_s, result.read_mib_s
    if not write:
        return Measured(run.target, run)
    read = read or write  # a job that only read was replayed writing
    job = io.bytes_written / (write * MiB) + io.bytes_read / (read * MiB)
    if workload.seconds:
        seconds = float(workload.seconds)
        moved = write * MiB * seconds
    else:
        seconds = replay.replay_bytes / (write * MiB)
        moved = replay.replay_bytes
        if workload.read_back:
            seconds += replay.replay_bytes / (read * MiB)
            moved *= 2
    return Measured(
        run.target,
        run,
        seconds=seconds,
        mib_s=write,
        read_mib_s=result.read_mib_s,
        job_io_seconds=job,
        staging=node_local,
        scale=(io.bytes_written + io.bytes_read) / moved,
    )


def _files(run, result, io: JobIO, workload: Workload, staging: Staging | None) -> Measured:
    """mdtest's replay: the job's files at the files a second each phase measured."""
    rates = result.rates
    create, read = rates.get("create_ops_s"), rates.get("read_ops_s")
    if not create:
        return Measured(run.target, run)
    files = workload.files_per_process * workload.processes
    file_bytes = workload.size_per_process // workload.files_per_process
    seconds = sum(files / rate for rate in rates.values() if rate)
    job = io.files / create + (io.files / read if io.bytes_read and read else 0)
    return Measured(
        run.target,
        run,
        seconds=seconds,
        mib_s=create * file_bytes / MiB,
        ops_s=create,
        job_io_seconds=job,
        staging=staging,
        scale=io.files / files,
    )


def _staging(io: JobIO, profile: SiteProfile) -> Staging | None:
    """Staging onto a node's own storage: the job's input in, what it wrote (its files'
    size at most) out, at the fastest shared target's streaming figure."""
    bytes_out = min(io.bytes_written, io.footprint_bytes or io.bytes_written)
    if not io.bytes_read and not bytes_out:
        return None
    streaming = settings.WEATHER_STREAMING_EXERCISE
    figures = for_exercise(profile, streaming, Metric.WRITE)
    shared = {t.key: t for t in profile.targets.filter(shared=True, in_memory=False)}
    candidates = [(figures[key], shared[key]) for key in figures if key in shared]
    if not candidates:
        return None
    figure, target = max(candidates, key=lambda pair: pair[0].value)
    return Staging(
        bytes_in=io.bytes_read,
        bytes_out=bytes_out,
        mib_s=figure.value,
        source=f"{target.name}'s {figure.value:,.0f} MiB/s, exercise {streaming}'s figure "
        f"{figure.source}",
    )


def _beside_the_rules(
    io: JobIO, profile: SiteProfile, fastest: Measured, timed: list[Measured]
) -> tuple[str, bool]:
    """Check my job's first choice beside the measured fastest: the page believes the
    measurement, and says so when they part."""
    job = advice_for(io, profile)
    first = job.recommended[0] if job.recommended else None
    by_key = {row.target.key: row for row in timed}
    if first == fastest.target.key:
        return (f"Check my job's rules put {fastest.target.name} first too.", True)
    ruled = by_key.get(first)
    named = next((r.target_name for r in job.advice.ranking if r.target_key == first), first)
    there = (
        f", where your job's I/O would take {spoken_seconds(ruled.total_seconds)}"
        if ruled
        else " (not replayed here: tick it too to measure it)"
    )
    return (
        f"Check my job's rules put {named} first{there}. Believe the measurement: it "
        "ran your job's kind of I/O on this site's storage as it is today; the rules "
        "only know what such targets usually do.",
        False,
    )


def _chart(rows: list[Measured]) -> dict:
    """Per target, the job's time in I/O and in staging, in seconds (replay.js)."""
    timed = [row for row in rows if row.job_io_seconds is not None]
    return {
        "labels": [row.target.name for row in timed],
        "io": [round(row.job_io_seconds, 2) for row in timed],
        "staging": [round(row.staging.seconds, 2) if row.staging else 0 for row in timed],
    }


def job_summary(io: JobIO) -> str:
    """The job's I/O in a phrase: "48 GiB written and 12 GiB read in 4 KiB requests"."""
    moved = [f"{iec(io.bytes_written)} written"] if io.bytes_written else []
    if io.bytes_read:
        moved.append(f"{iec(io.bytes_read)} read")
    files = f"{io.files:,} file{'s' if io.files != 1 else ''}"
    return f"{' and '.join(moved)} in {iec(io.typical_request_bytes)} requests, {files}"
