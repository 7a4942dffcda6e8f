"""Advice from a job's real I/O (as Darshan records it, exercises/advisor/job_io.py) instead
of a questionnaire: the job's I/O becomes the advisor's Question, and the job is set
beside the site's exercises to name the one it resembles and the speed-up the
site's figures for that exercise promise.

Pure, like the rest of the advisor: the caller brings the targets' facts, the
exercises' shapes and the figures (exercises/advisor/facts.py does, from the database).
"""

import math
from collections.abc import Callable, Container, Mapping, Sequence
from dataclasses import dataclass, replace

from exercises.advisor import Access, Advice, FileShape, Question, TargetFacts, advise
from exercises.advisor.job_io import JobIO
from exercises.advisor.plan import keeper_of
from exercises.advisor.question import Recommendation
from exercises.advisor.words import speed
from portal.units import GiB, KiB, MiB, ratio_as_shown, times

# Sequential: most requests start where the last one ended (consecutive), or at
# least further on (sequential: a strided pattern). Random: neither. Random 4 KiB
# writes that touch each block once still go "forward" about half the time, so the
# sequential share alone does not tell streaming from scattering.
SEQUENTIAL_CONSEC = 0.7
SEQUENTIAL_SEQ = 0.9
RANDOM_SEQ = 0.7
RANDOM_CONSEC = 0.3
# Many small files: more than this many files, averaging under SMALL_FILE bytes, or a
# job that spends more time opening and closing than reading and writing.
MANY_FILES = 100
SMALL_FILE = 4 * MiB
META_HEAVY = 0.5
# Ranks sharing a file, beyond what one node holds: the data is shared between nodes.
RANKS_PER_NODE = 128
# A job that syncs set beside an exercise that does not, or the other way round.
SYNC_MISMATCH = 0.5
# How much further than any exercise that syncs the page-cache trap stays (4a).
NEVER_A_MODEL = 2.0
# Small interleaved pieces of one shared file: several ranks, requests under this
# size, going forward but seldom right after the rank's last one (its next piece lies
# past the other ranks'). Collective buffering gathers exactly these.
INTERLEAVED_MAX = 1 * MiB
# One large shared file: several ranks writing at least this much into the job's
# shared files, in requests of at least STREAM_MIN (not 8a's interleaved pieces). At
# Lustre's 1 MiB stripe size that is 128 stripes (32 of GlusterFS's 4 MiB pieces):
# enough to keep every server busy, if the file is spread over them.
LARGE_SHARED = 128 * MiB
STREAM_MIN = 64 * KiB
# How each filesystem spreads a new file over its servers: the command, for DIR.
STRIPE_COMMANDS = {
    "lustre": "lfs setstripe -c -1 DIR (every OST; -c 8 for eight) before the file is made",
    "beegfs": "beegfs-ctl --setpattern --numtargets=8 DIR before the file is made",
}


def pattern_of(p: JobIO) -> Access:
    if not p.judged_requests:  # no I/O, or each file in one request: nothing scattered
        return Access.SEQUENTIAL
    if p.consecutive_share >= SEQUENTIAL_CONSEC or p.sequential_share >= SEQUENTIAL_SEQ:
        return Access.SEQUENTIAL
    if p.sequential_share < RANDOM_SEQ and p.consecutive_share < RANDOM_CONSEC:
        return Access.RANDOM
    return Access.MIXED


def file_shape_of(p: JobIO) -> FileShape:
    many = p.files > MANY_FILES and p.footprint_bytes / p.files < SMALL_FILE
    metadata_bound = p.files > 10 and p.meta_share >= META_HEAVY
    return FileShape.MANY_SMALL if many or metadata_bound else FileShape.FEW_LARGE


def question_for(p: JobIO, node_memory_gib: float) -> Question:
    """The questionnaire as the log answers it. The data is what the files hold at
    their largest (a job rewriting one file 100 times needs room for it once)."""
    return Question(
        access=pattern_of(p),
        file_shape=file_shape_of(p),
        data_gib=p.footprint_bytes / GiB,
        node_memory_gib=node_memory_gib,
        must_outlive_job=p.bytes_written > 0,
        shared_between_nodes=p.shared_files > 0 and p.nprocs > RANKS_PER_NODE,
        file_count=p.files,
        io_time_share=p.io_time_share,
        reads_input=p.bytes_read > 0,
    )


# --- the exercise the job resembles ---------------------------------------------


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


def io_distance(p: JobIO, e: ExerciseShape) -> float:
    """How unlike the exercise's I/O the job's is: its pattern counts most, then the
    request size, the files per process and the process count, each on a log scale
    (twice or half as many is the same step)."""
    access = pattern_of(p)
    if file_shape_of(p) is FileShape.MANY_SMALL:
        # What costs is the files, whatever the order of their requests: like the
        # exercises that write many files, unlike all others.
        d = 0.0 if e.files_per_process > 1 else 3.0
    elif access is Access.MIXED:  # half like either pattern
        d = 1.5
    else:
        d = 0.0 if access.value == e.pattern else 3.0
    size = max(p.typical_request_bytes, 1)
    d += abs(math.log2(size / e.block_size)) / 4
    d += abs(math.log2(max(p.nprocs, 1) / e.processes)) / 3
    files_per_process = max(p.files / max(p.nprocs, 1), 1.0)
    d += abs(math.log2(files_per_process / e.files_per_process)) / 3
    # One file shared by the processes, or a file each; reading the data back or not.
    d += 0.0 if (p.shared_files > 0) == e.shared_file else 1.0
    d += 0.0 if (p.bytes_read > 0) == e.reads else 0.5
    # Between exercises that do the same I/O with different programs (1a with fio,
    # 1a-ior with IOR), the job's own program: a lab run is then its own exercise, and a
    # user's program, which is neither, changes nothing.
    d += 0.0 if program_of(p.exe) == e.engine else 0.01
    # Whether it forces its data out to the storage (fsync) before it ends.
    return d + (0.0 if (p.syncs > 0) == e.fsync else SYNC_MISMATCH)


def distance(p: JobIO, e: ExerciseShape) -> float:
    """As io_distance, for choosing the model of a job: the page-cache trap (4a) times
    the cache, not the storage, so it is never the model. It stays NEVER_A_MODEL
    further than any exercise that syncs, even for a job that never syncs."""
    return io_distance(p, e) + (0.0 if e.fsync else NEVER_A_MODEL + SYNC_MISMATCH)


def program_of(exe: str) -> str:
    """The program's name in a log's command line ("/usr/bin/fio --x" -> "fio")."""
    return exe.split(maxsplit=1)[0].rsplit("/", 1)[-1] if exe.strip() else ""


def resembles(p: JobIO, shapes: Sequence[ExerciseShape]) -> ExerciseShape | None:
    """The closest exercise to model a job on; equal ones keep the site's order (the
    first of 1a, 4b and 7, whose logs look alike, is the one the lab starts with)."""
    return min(shapes, key=lambda e: distance(p, e), default=None)


def named(
    p: JobIO, shapes: Sequence[ExerciseShape], model: ExerciseShape, ran: str | None
) -> ExerciseShape:
    """What a lab run's log is named: the exercise it ran, if its I/O is as close to
    that exercise's as to the model (resembles(): a log cannot tell 7 from 1a, which
    write alike, nor is the trap ever a model); else, the log having done something
    else, the model, as for any job."""
    own = next((e for e in shapes if e.key == ran), None)
    if own is not None and io_distance(p, own) <= distance(p, model):
        return own
    return model


def interleaved(p: JobIO) -> bool:
    """Whether the job's ranks wrote small pieces of a shared file in turns, each
    piece a request of its own (exercise 8a's pattern)."""
    return (
        p.shared_files > 0
        and p.nprocs > 1
        and p.writes > p.nprocs
        and 0 < p.typical_request_bytes < INTERLEAVED_MAX
        and p.sequential_share >= SEQUENTIAL_SEQ
        and p.consecutive_share < SEQUENTIAL_CONSEC
    )


def collective_advice(
    p: JobIO,
    targets: Sequence[TargetFacts],
    shapes: Sequence[ExerciseShape],
    figures_for: "FiguresFor",
) -> str:
    """For a job that wrote interleaved pieces of a shared file: collective I/O, or a
    file per process, with the site's figures of the same pieces written independently
    and collectively where it has both (on the target collective gains most), else ""."""
    if not interleaved(p):
        return ""
    text = (
        f"Your {p.nprocs:,} processes wrote pieces of {size_words(p.typical_request_bytes)} "
        "of one shared file in turns, each piece a request of its own. Collective MPI-IO "
        "gathers such pieces into a few large writes: call MPI_File_write_at_all instead "
        "of MPI_File_write_at, or ask your I/O library for collective transfers (HDF5: "
        "H5Pset_dxpl_mpio with H5FD_MPIO_COLLECTIVE; NetCDF: nc_var_par_access with "
        "NC_COLLECTIVE). Or let each process write a file of its own."
    )
    independent = next((e for e in shapes if e.mpi_io and not e.collective and e.shared_file), None)
    collective = next((e for e in shapes if e.collective), None)
    if independent is None or collective is None:
        return text
    together = figures_for(collective.key, False)
    found = best_gain(together, figures_for(independent.key, False))
    if found is None:
        return text
    best, gain, figures = found
    names = {t.key: t.name for t in targets}
    measured = f"exercises {collective.key} and {independent.key}, {together[best][1]}"
    if not gains(gain):  # slower on every target measured: promise nothing
        return (
            f"Your {p.nprocs:,} processes wrote pieces of {size_words(p.typical_request_bytes)} "
            "of one shared file in turns, each piece a request of its own. Collective "
            "MPI-IO gathers such pieces into a few large writes, but not faster here: on "
            f"every target this site measured both, collective calls were slower, and "
            f"least so on {names.get(best, best)}, {gain} independent ones: {figures} "
            f"({measured}). Keep your calls as they are, or let each process write a file "
            "of its own."
        )
    return (
        f"{text} On {names.get(best, best)}, collective calls wrote exercise "
        f"{independent.key}'s pieces {gain} independent ones: {figures} ({measured})."
    )


def gains(gain: str) -> bool:
    """Whether best_gain's words say a gain ("1.5× as fast as"), not a loss."""
    return not gain.endswith("slower than")


def best_gain(
    better: Mapping[str, tuple[float, str]],
    usual: Mapping[str, tuple[float, str]],
    where: Container[str] | None = None,
) -> tuple[str, str, str] | None:
    """Of the targets with both figures (and in `where`, if given), the one where the
    better way gained most: its key, "1.5× as fast as" (or "1.2× slower than"), and
    "120.0 MiB/s against 80.0 MiB/s"; None without both figures anywhere."""
    both = [
        k
        for k in better
        if k in usual and better[k][0] > 0 and usual[k][0] > 0 and (where is None or k in where)
    ]
    if not both:
        return None
    best = max(both, key=lambda k: better[k][0] / usual[k][0])
    fast, slow = better[best][0], usual[best][0]
    ratio = ratio_as_shown(fast, slow)
    gain = f"{times(ratio)} as fast as" if ratio >= 1 else f"{times(1 / ratio)} slower than"
    return best, gain, f"{speed(fast)} against {speed(slow)}"


def large_shared(p: JobIO) -> bool:
    """Whether the job's ranks streamed a large shared file (exercise 10a's pattern),
    the file that one server limits unless it is striped."""
    return (
        p.shared_files > 0
        and p.nprocs > 1
        and p.bytes_written >= LARGE_SHARED * p.shared_files
        and p.typical_request_bytes >= STREAM_MIN
        and not interleaved(p)
    )


def striping_advice(
    p: JobIO,
    targets: Sequence[TargetFacts],
    shapes: Sequence[ExerciseShape],
    figures_for: "FiguresFor",
) -> str:
    """For a job that streamed a large shared file: stripe it, with the way each of the
    site's targets offers (its spread directory, or its filesystem's command), and the
    site's figures of one such file on one server and spread where it has both."""
    if not large_shared(p):
        return ""
    wrote = (
        f"Your {p.nprocs:,} processes wrote {size_words(p.bytes_written)} into "
        f"{'one shared file' if p.shared_files == 1 else f'{p.shared_files} shared files'}."
    )
    text = (
        f"{wrote} A file lies on one storage server unless it is striped, and then that "
        "server's link and disks limit every process that writes it: spread it over all "
        "of them."
    )
    ways = []
    for t in targets:
        command = next((c for fs, c in STRIPE_COMMANDS.items() if fs in t.filesystem.lower()), "")
        if t.spread_directory:
            ways.append(f"on {t.name}, write it in {t.spread_directory}")
        elif command:
            ways.append(f"on {t.name} ({t.filesystem}), {command}")
    if ways:
        text += f" Here: {'; '.join(ways)}."
    spread = next((e for e in shapes if e.spread and e.shared_file), None)
    one = spread and next(
        (e for e in shapes if e.shared_file and not e.spread and twins(e, spread)), None
    )
    if spread is None or one is None:
        return text
    wide = figures_for(spread.key, False)
    # Only where the target has the spread layout: elsewhere the two ran alike.
    laid_out = {t.key for t in targets if t.spread_directory}
    found = best_gain(wide, figures_for(one.key, False), laid_out)
    if found is None:
        return text
    best, gain, figures = found
    names = {t.key: t.name for t in targets}
    measured = f"exercises {spread.key} and {one.key}, {wide[best][1]}"
    if not gains(gain):  # slower wherever the site measured it: promise nothing
        return (
            f"{wrote} A file lies on one storage server unless it is striped, but striping "
            "did not pay here: on every target where this site measured one such file "
            f"both ways, spread over the servers it was written slower, least so on "
            f"{names.get(best, best)}, {gain} on one server: {figures} ({measured}). Keep "
            "it on one server here, or measure your own file both ways before you stripe it."
        )
    return (
        f"{text} On {names.get(best, best)}, one such file spread over the servers was "
        f"written {gain} on one server: {figures} ({measured})."
    )


# Below this, what a job writes takes little space anywhere: no word on compression.
COMPRESSION_MIN = 64 * MiB


def compression_advice(p: JobIO, targets: Sequence[TargetFacts]) -> str:
    """For a job that wrote much, what each target that compresses would store of it:
    a log does not say whether the data compresses, so both cases, with the site's
    own ratio where its runs measured one, and how to find out."""
    packing = [t for t in targets if t.compression]
    if p.bytes_written < COMPRESSION_MIN or not packing:
        return ""
    written = size_words(p.bytes_written)
    said = []
    for t in packing:
        text = f"{t.name} compresses what it stores ({t.compression})"
        if t.stored_ratio:
            ratio, source = t.stored_ratio
            text += (
                f": data that compresses took {times(ratio)} less space there ({source}), so "
                f"your {written} would take about {size_words(round(p.bytes_written / ratio))} "
                "if it compresses as well"
            )
        said.append(text)
    return (
        f"Your job wrote {written}. {'; '.join(said)}. Data that is compressed already "
        "(gzip, NetCDF or HDF5 with a compression filter, images) or random takes all its "
        "space anywhere. A log does not say which yours is: compress a sample of your "
        "output (zstd -3 -c FILE | wc -c) and compare with its size."
    )


def twins(a: ExerciseShape, b: ExerciseShape) -> bool:
    """The same I/O, whatever the layout."""
    return replace(a, key="", title="", spread=False) == replace(b, key="", title="", spread=False)


def size_words(n: int) -> str:
    for unit, name in ((GiB, "GiB"), (MiB, "MiB"), (KiB, "KiB")):
        if n >= unit:
            value = n / unit
            return f"{value:,.0f} {name}" if value == int(value) else f"{value:,.1f} {name}"
    return f"{n} B"


def likeness(p: JobIO, e: ExerciseShape) -> str:
    """ "like 2a: 16,384 writes of 4 KiB at random offsets, one process, one file"."""
    writing = p.writes >= p.reads
    count, verb = (p.writes, "write") if writing else (p.reads, "read")
    where = {
        Access.RANDOM: "at random offsets",
        Access.SEQUENTIAL: "one after another",
        Access.MIXED: "partly in order, partly scattered",
    }[pattern_of(p)]
    procs = "one process" if p.nprocs == 1 else f"{p.nprocs:,} processes"
    files = "one file" if p.files == 1 else f"{p.files:,} files"
    size = size_words(p.typical_request_bytes)
    requests = f"{count:,} {verb}{'s' if count != 1 else ''}"
    return f"like {e.key}: {requests} of {size} {where}, {procs}, {files}"


# --- the advice -----------------------------------------------------------------

# (exercise key, the job mostly reads?) -> target key -> (MiB/s, where it comes from).
FiguresFor = Callable[[str, bool], Mapping[str, tuple[float, str]]]


@dataclass(frozen=True)
class Speedup:
    target_key: str  # the recommended target
    baseline_key: str  # what it is compared with
    ratio: float  # the recommended target's figure over the baseline's, as shown
    text: str
    # The baseline is faster by the figures, and the text says why the recommended
    # target comes first all the same: the ranking weighs more than the figure.
    trade_off: bool = False


@dataclass(frozen=True)
class JobAdvice:
    pattern: Access
    question: Question
    advice: Advice
    resembles: ExerciseShape | None  # what the job's I/O is named (named())
    model: ExerciseShape | None  # whose figures the advice quotes: what Check my job names
    likeness: str
    speedup: Speedup | None
    collective: str = ""  # interleaved pieces of a shared file: collective I/O, with figures
    striping: str = ""  # one large shared file: stripe it, how, with figures
    compression: str = ""  # what a target that compresses would save on its output
    # Where results go after a job on a target that does not keep them: the plan's
    # keeper (plan.keeper_of), at whose figure a replay counts staging; and the targets
    # as the advice saw them (with the resembling exercise's figures), for the copies.
    keeper: TargetFacts | None = None
    targets: tuple[TargetFacts, ...] = ()

    @property
    def kind(self) -> str:
        """What the job's I/O is, in the page's heading: "many small files", "random I/O"."""
        if self.question.file_shape is FileShape.MANY_SMALL:
            return "many small files"
        return f"{self.pattern.value} I/O"

    @property
    def ranking(self) -> list[str]:
        return [r.target_key for r in self.advice.ranking]

    @property
    def recommended(self) -> list[str]:
        """The targets to try the resembling exercise on: the best, and what it is
        compared with, so the run shows the difference."""
        keys = [self.ranking[0]] if self.ranking else []
        if self.speedup and self.speedup.baseline_key not in keys:
            keys.append(self.speedup.baseline_key)
        return keys


def speedup(
    advice: Advice,
    targets: Sequence[TargetFacts],
    question: Question,
    figures: Mapping[str, tuple[float, str]],
    exercise: ExerciseShape | None,
    by_writes: bool = False,
) -> Speedup | None:
    """The best target against the site's usual place for job data (or, when that is
    the best, the runner-up), by `figures`: target key -> (MiB/s, where it comes
    from) for the resembling exercise. None without both figures."""
    if not advice.ranking or exercise is None:
        return None
    best = advice.ranking[0]
    usual = keeper_of(targets, replace(question, data_gib=0))
    if usual is not None and usual.key != best.target_key:
        baseline = usual.key
    elif len(advice.ranking) > 1:
        baseline = advice.ranking[1].target_key
    else:
        return None
    if best.target_key not in figures or baseline not in figures:
        return None
    (fast, source), (slow, _) = figures[best.target_key], figures[baseline]
    if fast <= 0 or slow <= 0:
        return None
    names = {t.key: t.name for t in targets}
    first, other = names[best.target_key], names[baseline]
    ratio = ratio_as_shown(fast, slow)
    where = f"in exercise {exercise.key} ({source})"
    if ratio > 1:
        text = (
            f"Expect {first} to be about {times(ratio)} faster than {other} for this job: "
            f"{speed(fast)} against {speed(slow)} {where}."
        )
    elif ratio == 1:
        text = (
            f"Expect {first} to be about as fast as {other} for this job: {speed(fast)} "
            f"against {speed(slow)} {where}."
        )
    else:
        # The figure says the other is faster: the first place is not the figure's, and
        # the sentence says why, never "the recommended one is slower" alone.
        held = next((r for r in advice.ranking if r.target_key == baseline), None)
        text = (
            f"{other} is about {times(1 / ratio)} faster than {first} for this job by the "
            f"figures: {speed(slow)} against {speed(fast)} {where}. {first} comes first "
            f"all the same: {held_back(held, other)}."
        )
    if by_writes:
        text += (
            f" The job mostly reads, and this site has no {exercise.pattern} read figures: "
            f"these are {exercise.key}'s writes. Reads from a disk pay the same seeks and "
            "round trips; reads from memory cost no more than its writes."
        )
    return Speedup(best.target_key, baseline, ratio, text, trade_off=ratio < 1)


def held_back(other: Recommendation | None, name: str) -> str:
    """Why the ranking puts a target the figures call faster after the first: what
    stops it, what it would cost the job's results, or the site's advice in a near tie."""
    if other is None:
        return f"the ranking weighs more than {name}'s figure"
    if not other.fits and other.reasons:
        reason = other.reasons[0].rstrip(".")
        # After a colon a sentence goes on in lower case ("The site advises" -> "the").
        return reason[:1].lower() + reason[1:] if reason[1:2].islower() else reason
    if other.full:
        return f"your data would fill {name}'s quota, with no room left for results"
    if not other.keeps_results:
        return (
            f"{name} does not keep what the job writes past it, and copying the results "
            "to a target that does is counted in its time"
        )
    return f"the two are near enough that the site's advice for each decides, not {name}'s figure"


def advise_job(
    p: JobIO,
    targets: Sequence[TargetFacts],
    node_memory_gib: float,
    shapes: Sequence[ExerciseShape],
    figures_for: FiguresFor,
    ran: str | None = None,
) -> JobAdvice:
    """`ran`: the exercise a lab run ran, to name its log by (named())."""
    question = question_for(p, node_memory_gib)
    reading = reads_mostly(p)
    # A job that reads is set beside an exercise that reads the same way, where the
    # site has one; else beside its writes, and every figure says so.
    readers = [s for s in shapes if s.reads and s.pattern == pattern_of(p).value]
    pool = readers if reading and readers else shapes
    exercise = resembles(p, pool)
    name = named(p, pool, exercise, ran) if exercise else None
    figures = figures_for(exercise.key, reading) if exercise else {}
    # Without read figures (an exercise that reads nothing back, or a site that has
    # figures of its writes only), the writes stand in, and every figure says so.
    by_writes = reading and exercise is not None and not figures
    if by_writes:
        figures = figures_for(exercise.key, False)
    if exercise:
        # Every figure on the page is the resembling exercise's, or none: the ranking's
        # notes and the speed-up set the same two numbers beside each other, and a job
        # like 3 (many small files) is never ranked by another exercise's figures (2a's).
        label = f"exercise {exercise.key}" + (
            " (writes)" if by_writes else " (reads)" if reading else ""
        )
        targets = [
            replace(t, job_mib_s=figures[t.key][0] if t.key in figures else None, job_label=label)
            for t in targets
        ]
    advice = advise(targets, question)
    return JobAdvice(
        keeper=keeper_of(targets, question),
        targets=tuple(targets),
        pattern=question.access,
        question=question,
        advice=advice,
        resembles=name,
        model=exercise,
        likeness=likeness(p, name) if name else "",
        speedup=speedup(advice, targets, question, figures, exercise, by_writes),
        collective=collective_advice(p, targets, shapes, figures_for),
        striping=striping_advice(p, targets, shapes, figures_for),
        compression=compression_advice(p, targets),
    )


def reads_mostly(p: JobIO) -> bool:
    return p.bytes_read > p.bytes_written
