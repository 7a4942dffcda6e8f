"""Advice from a job's real I/O (as Darshan records it, exercises/advisor/job_io.py) instead
of a questionnaire: the job's I/O becomes the advisor's Question, and the job is set
beside the site's exercises to name the one it resembles and the speed-up the
site's figures for that exercise promise.

Pure, like the rest of the advisor: the caller brings the targets' facts, the
exercises' shapes and the figures (exercises/advisor/facts.py does, from the database).
"""

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from exercises.advisor import Access, Advice, FileShape, Question, TargetFacts, advise
from exercises.advisor.job_io import JobIO
from exercises.advisor.layouts import (
    FiguresFor,
    collective_advice,
    compression_advice,
    size_words,
    striping_advice,
)
from exercises.advisor.patterns import file_shape_of, pattern_of, reads_mostly
from exercises.advisor.plan import keeper_of
from exercises.advisor.question import ExerciseShape, Recommendation
from exercises.advisor.words import speed
from portal.units import GiB, ratio_as_shown, times

# Ranks sharing a file, beyond what one node holds: the data is shared between nodes.
RANKS_PER_NODE = 128
# A job that syncs set beside an exercise that does not, or the other way round.
SYNC_MISMATCH = 0.5
# How much further than any exercise that syncs the page-cache trap stays (4a).
NEVER_A_MODEL = 2.0


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
