"""What a replay's runs say in the job's terms: per target, how long the replay was
timed and its rate, the job's whole I/O at that rate (its bytes divided by it, or its
files by the files a second), the copies Check my job's rules count there, whether the
run had its target to itself, and whether it ranks at all: a run timed for less than
MIN_SECONDS ranks nothing, and says why. Then the rules' verdict beside the replay's
(jobio/replay_verdict.py).

The job's time is an extrapolation and says so: the replay keeps what decides a
target's speed (replay.py), not the job's compute between requests, so the figure is
the job's time in I/O, not its run time.
"""

from dataclasses import dataclass, replace

from exercises.advisor.facts import advice_for
from exercises.advisor.job import JobAdvice
from exercises.advisor.job_io import JobIO
from exercises.advisor.judge import copying, cost_of
from exercises.advisor.patterns import reads_mostly
from exercises.catalogue.models import SiteProfile, StorageTarget
from jobio.models import Replay
from jobio.replay import MIN_SECONDS
from jobio.replay_verdict import Beside, beside_the_rules
from jobs.company import Company, annotated, company
from jobs.engines import Workload
from jobs.engines.base import ITERATIONS_MAX
from jobs.models import BenchmarkRun, RunStatus
from portal.units import MiB, iec, spoken_seconds


@dataclass(frozen=True)
class Staging:
    """Copying the job's data to use a target that does not keep it (or a node's own
    storage): what Check my job's rules count there (exercises/advisor/judge.py:
    cost_of), at the streaming figure of the target that keeps results, as it stood
    when the replay ended."""

    seconds: float
    amount: str  # "2 GiB of results copied back to $GLOBAL"


@dataclass(frozen=True)
class Measured:
    """One target's replay run and what it says of the job."""

    target: StorageTarget
    run: BenchmarkRun
    seconds: float | None = None  # how long each timed phase went: what its figure is over
    mib_s: float | None = None  # written per second (or, mdtest, the files' bytes)
    read_mib_s: float | None = None
    ops_s: float | None = None  # files created per second (mdtest)
    job_io_seconds: float | None = None  # the job's I/O at these rates
    staging: Staging | None = None  # the copies the rules count on this target
    scale: float | None = None  # the job's I/O per unit of the replay's
    company: Company | None = None  # the other runs on its target while it ran
    short: str = ""  # why it ranks nothing though it has a figure
    # The rules would copy the job's data to use this target ("in": its input staged
    # onto it, "out": its results to a target that keeps them, or "in and out"), and
    # there is no figure to count the copies by: its time leaves them out.
    copies_uncounted: str = ""

    @property
    def ranks(self) -> bool:
        return self.job_io_seconds is not None and not self.short

    @property
    def alone(self) -> bool | None:
        """Whether no other run shared its target while it ran (None: not known)."""
        return None if self.company is None else self.company.runs == 0

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
    fastest: Measured | None  # the least time for the job's I/O, copies counted, of those that rank
    beside: Beside | None  # the rules' verdict beside the replay's, once every run ended
    chart: dict
    staged: str  # how copies are counted, where there are any
    reads: bool  # the job mostly read: the replay's figure is of reads

    @property
    def verdict(self) -> str:
        """Which verdict the page believes, and why, in one sentence ("" while going)."""
        return self.beside.why if self.beside else ""

    @property
    def agrees(self) -> bool | None:
        return None if self.beside is None else self.beside.agree


def answer(replay: Replay, profile: SiteProfile) -> Answer:
    """The replay's runs, each in the job's terms, beside the rules (a few queries, the
    site's figures, and the advice)."""
    io = JobIO.from_json(replay.check_of.io)
    workload = Workload.model_validate(replay.workload)
    runs = list(
        annotated(replay.runs.select_related("target", "result")).order_by(
            "target__order", "target_id"
        )
    )
    going = any(run.is_unfinished or run.figure_pending for run in runs)
    # The rules and the copies they count are set beside the runs once the last one
    # ended: not on every poll of the runs going (the advice reads the site's figures).
    advice = None if going else advice_for(io, profile)
    staging = fixed_staging(replay, advice) if advice else {"needed": {}, "targets": {}}
    rows = [_measured(run, io, replay, workload, staging) for run in runs]
    ranked = [row for row in rows if row.ranks]
    fastest = min(ranked, key=lambda row: row.total_seconds) if ranked else None
    beside = beside_the_rules(advice, rows, fastest) if advice else None
    staged = _staged(staging, rows)
    return Answer(rows, going, fastest, beside, _chart(rows), staged, reads_mostly(io))


def fixed_staging(replay: Replay, advice: JobAdvice) -> dict:
    """The copies the rules count per target (exercises/advisor/judge.py: copying,
    cost_of), at the streaming figure of the target the advice keeps results on: as
    they stood when the replay's last run ended, kept with it (Replay.staging), so a
    figure measured later does not change what a finished replay said."""
    if replay.staging is not None:
        return replay.staging
    keeper = advice.keeper
    found: dict = {"keeper": keeper.name if keeper else "", "source": "", "mib_s": None}
    found["needed"], found["targets"] = {}, {}
    for facts in advice.targets if keeper else ():
        way = copying(facts, advice.question)
        if facts.key == keeper.key or not way:
            continue
        found["needed"][facts.key] = way  # "in", "out", or "in and out"
        copies = cost_of(facts, advice.question, keeper).copies
        if copies is not None:
            found["mib_s"], found["source"] = copies.value, copies.source
            found["targets"][facts.key] = {"seconds": copies.seconds, "amount": copies.amount}
    # Once: the first answer after the end fixes it; of two at once, one wins.
    Replay.objects.filter(pk=replay.pk, staging__isnull=True).update(staging=found)
    replay.staging = Replay.objects.values_list("staging", flat=True).get(pk=replay.pk)
    return replay.staging


# What the rules copy to use a target (exercises/advisor/judge.py: copying), said of it.
NEEDS = {
    "in": "your input staged onto it",
    "out": "your results copied back",
    "in and out": "your input staged onto it and your results copied back",
}


def _staged(staging: dict, rows: list[Measured]) -> str:
    """Which targets need copies to and from the keeper, and how they are counted."""
    needed = staging.get("needed") or {}
    names = {row.target.key: row.target.name for row in rows}
    said = [f"{names[key]} needs {NEEDS[way]}" for key, way in needed.items() if key in names]
    if not said:
        return ""
    keeper = staging["keeper"]
    text = f"Copies to and from {keeper}, which keeps your results: {'; '.join(said)}."
    if staging["mib_s"] is None:
        return (
            f"{text} They are not counted above: this site has no streaming figure of "
            f"{keeper} yet (a calibration round measures one)."
        )
    return (
        f"{text} They are counted above as Check my job's rules count them, at {keeper}'s "
        f"{staging['mib_s']:,.1f} MiB/s ({staging['source']}), as it stood when the replay "
        "ended."
    )


def _measured(
    run: BenchmarkRun, io: JobIO, replay: Replay, plan: Workload, staging: dict
) -> Measured:
    result = getattr(run, "result", None)
    shared = company(run)
    if run.status != RunStatus.COMPLETED or result is None:
        return Measured(run.target, run, company=shared)
    copies = staging["targets"].get(run.target.key)
    staged = Staging(copies["seconds"], copies["amount"]) if copies else None
    workload = run.workload_params
    if replay.engine == "mdtest":
        row = _files(run, result, io, replay, workload, staged, shared)
    else:
        row = _bytes(run, result, io, replay, plan, workload, staged, shared)
    way = staging.get("needed", {}).get(run.target.key, "")
    return replace(row, copies_uncounted=way) if staged is None and way else row


def _bytes(
    run: BenchmarkRun,
    result,
    io: JobIO,
    replay: Replay,
    plan: Workload,
    workload: Workload,
    staged: Staging | None,
    shared: Company | None,
) -> Measured:
    """fio's and IOR's replay: the job's bytes at the rates each phase measured."""
    write, read = result.write_mib_s, result.read_mib_s
    if io.bytes_written and not write or io.bytes_read and not (read or write):
        return Measured(run.target, run, company=shared)
    # Replays made before they read kept their reads at the write rate.
    read = read or write
    job = io.bytes_written / (write * MiB) if io.bytes_written else 0.0
    job += io.bytes_read / (read * MiB) if io.bytes_read else 0.0
    phases = [rate for rate in (write, result.read_mib_s) if rate]
    once = plan.size_per_process * plan.processes / MiB  # through the files once
    # Each timed phase: fio's seconds; IOR's at least its seconds and at least once
    # through its bytes; a replay made before it was timed, once through.
    seconds = min(max(workload.seconds or 0, once / rate) for rate in phases)
    if replay.engine == "fio" and workload.seconds:
        seconds = float(workload.seconds)
    moved = sum(rate * MiB * seconds for rate in phases)
    short = "" if seconds >= MIN_SECONDS else _too_short(seconds, "")
    return Measured(
        run.target,
        run,
        seconds=seconds,
        mib_s=write,
        read_mib_s=result.read_mib_s,
        job_io_seconds=job,
        staging=staged,
        scale=(io.bytes_written + io.bytes_read) / moved,
        company=shared,
        short=short,
    )


def _files(
    run: BenchmarkRun,
    result,
    io: JobIO,
    replay: Replay,
    workload: Workload,
    staging: Staging | None,
    shared: Company | None,
) -> Measured:
    """mdtest's replay: the job's files at the files a second each phase measured;
    timed for its rounds of making files, each stopped at its seconds."""
    rates = result.rates
    create, read = rates.get("create_ops_s"), rates.get("read_ops_s")
    if not create:
        return Measured(run.target, run, company=shared)
    files = workload.files_per_process * workload.processes
    file_bytes = workload.size_per_process // workload.files_per_process
    # A round lasts its files at the rate (the best round's: the Max mdtest reports,
    # so never longer than it was), or its seconds where they stopped it.
    each = files / create
    if workload.seconds:
        each = min(each, float(workload.seconds))
    seconds = workload.iterations * each
    job = io.files / create + (io.files / read if io.bytes_read and read else 0)
    said = replay.sized.get(run.target.key, "")
    if workload.iterations >= ITERATIONS_MAX:
        said = (
            f"its {files:,} files made {workload.iterations} times over, the most a replay "
            "makes: the bound, not its seconds, decided"
        )
    short = "" if seconds >= MIN_SECONDS else _too_short(seconds, said)
    return Measured(
        run.target,
        run,
        seconds=seconds,
        mib_s=create * file_bytes / MiB,
        read_mib_s=read * file_bytes / MiB if read and io.bytes_read else None,
        ops_s=create,
        job_io_seconds=job,
        staging=staging,
        scale=io.files / (files * workload.iterations),
        company=shared,
        short=short,
    )


def _too_short(seconds: float, sized: str) -> str:
    why = f": {sized}" if sized else ""
    return (
        f"too short to rank: it was timed for {spoken_seconds(seconds)}, less than the "
        f"{MIN_SECONDS} s a figure needs{why}"
    )


def _chart(rows: list[Measured]) -> dict:
    """Per target that ranks, the job's time in I/O and in copies, in seconds (replay.js)."""
    timed = [row for row in rows if row.ranks]
    return {
        "labels": [row.target.name for row in timed],
        "io": [round(row.job_io_seconds, 2) for row in timed],
        "staging": [round(row.staging.seconds, 2) if row.staging else 0 for row in timed],
    }


def doing(engine: str, workload: Workload, reads: bool) -> str:
    """What the replay does, in the page's words: "lays its data out with fio before
    the clock starts, then reads it past the page cache"."""
    if engine == "mdtest":
        return "creates, writes, reads and removes small files with mdtest"
    if workload.read_only:
        return (
            "lays its data out with fio before the clock starts, then reads it past the page cache"
        )
    program = "IOR" if engine == "ior" else "fio"
    what = "a shared file" if not workload.file_per_process else "its data"
    if reads:
        return f"writes {what} with {program}, then reads it back past the page cache, timed apart"
    return f"writes {what} with {program}"


def job_summary(io: JobIO) -> str:
    """The job's I/O in a phrase: "48 GiB written and 12 GiB read in 4 KiB requests"."""
    moved = [f"{iec(io.bytes_written)} written"] if io.bytes_written else []
    if io.bytes_read:
        moved.append(f"{iec(io.bytes_read)} read")
    files = f"{io.files:,} file{'s' if io.files != 1 else ''}"
    return f"{' and '.join(moved)} in {iec(io.typical_request_bytes)} requests, {files}"
