"""The plan: where the job's data goes and what its I/O costs there; why a cheaper
target was passed over, with the figures; where results live on, and whether a copy
is safe there. Every sentence is held to the ranking's own figures."""

from collections.abc import Sequence

from exercises.advisor.judge import Block, Verdict
from exercises.advisor.question import Access, FileShape, Question, TargetFacts
from exercises.advisor.words import (
    TRIFLING_SECONDS,
    Tag,
    advised_against,
    duration,
    gib,
    job_tags,
    keeps_results,
    over_quota,
    phrase_tags,
    redundant,
    speed,
    took,
)

# A target passed over is said in the plan when its own I/O is this much cheaper.
VISIBLY_CHEAPER = 1.5

# --- where results live on ------------------------------------------------------


def keeper_of(targets: Sequence[TargetFacts], q: Question) -> TargetFacts | None:
    """The target results go to after a job on one that does not keep them: one they
    outlive the job on (words.keeps_results) with room for them, redundant, shared,
    fit for I/O-intensive work (a copy is), with headroom under its quota, named by the
    site as a place for results, and fast at streaming (the copy is one sequential
    pass)."""

    def rank(t: TargetFacts) -> tuple[bool, bool, bool, bool, bool, float]:
        headroom = t.quota_gib is None or q.data_gib <= t.quota_gib / 2
        for_results = any(Tag.RESULTS in phrase_tags(p) for p in t.use_for)
        heavy_ok = advised_against(t, {Tag.HEAVY}) is None  # the copy is heavy I/O
        speed = t.sequential_mib_s or 0.0
        return (redundant(t), t.shared, heavy_ok, headroom, for_results, speed)

    candidates = [t for t in targets if keeps_results(t) and not over_quota(t, q)]
    return max(candidates, key=rank, default=None)


# --- the plan -------------------------------------------------------------------


def plan(verdicts: list[Verdict], q: Question, keeper: TargetFacts | None) -> str:
    best = verdicts[0]
    if best.block is not Block.NONE:
        return no_fit_plan(verdicts, q)
    faster = fastest_other(best, verdicts, q)
    trifling = (
        Tag.LIGHT in job_tags(q)
        and best.facts.persistent
        and best.keeps
        and best.cost.seconds is not None
        and best.cost.seconds <= TRIFLING_SECONDS
    )
    sentences = [light_plan(best, faster) if trifling else where(best, verdicts, q, keeper)]
    if best.full and best.facts.quota_gib is not None:
        sentences.append(
            f"The data would fill {best.share:.0%} of its {gib(best.facts.quota_gib)} default "
            "quota, leaving little room for results: ask the administrators to raise it."
        )
    if best.cost.seconds is None:
        sentences.append(
            f"There is {best.cost.missing}, so it is placed by the site's advice, not by "
            "a measurement."
        )
    sentences.append(copy_kept(best, verdicts, q, keeper))
    if not trifling:
        sentences.append(passed_over(best, verdicts))
    return " ".join(s for s in sentences if s)


def fastest_other(best: Verdict, verdicts: list[Verdict], q: Question) -> Verdict | None:
    """The fastest other target that fits with room and keeps what the job keeps."""
    rivals = [
        v
        for v in verdicts
        if v is not best and v.fits and not v.full and v.keeps and v.cost.seconds is not None
    ]
    return min(rivals, key=lambda v: v.cost.seconds or 0.0, default=None)


def spent(v: Verdict, in_all: bool = False) -> str:
    """': about 5.2 s of I/O there (1 GiB at 197.0 MiB/s)', or '' without a figure."""
    if v.cost.seconds is None:
        return ""
    return (
        f": {duration(v.cost.seconds)} of I/O {'in all' if in_all else 'there'} ({v.cost.said()})"
    )


def light_plan(best: Verdict, faster: Verdict | None) -> str:
    """The trade-off of a light job kept where the site keeps light work, with both
    times: its I/O takes seconds at most, though another target is faster."""
    t, seconds = best.facts, best.cost.seconds or 0.0
    # "under a second" says too little beside another target's "3 ms": say both.
    exact = f"{took(seconds)}: " if seconds < 1 else ""
    text = (
        f"Keep these files on {t.name}: the job does little I/O, so speed hardly matters: "
        f"{duration(seconds)} of I/O there ({exact}{best.cost.said()})"
    )
    if faster is not None and (faster.cost.seconds or 0.0) < seconds:
        text += f", against {took(faster.cost.seconds or 0.0)} on {faster.facts.name}"
    if best.recommended_phrase:
        text += f", and the site recommends {t.name} for {best.recommended_phrase}"
    return text + "."


def where(best: Verdict, verdicts: list[Verdict], q: Question, keeper: TargetFacts | None) -> str:
    t = best.facts
    if not q.must_outlive_job and not t.persistent:
        if q.reads_input:
            return (
                f"Stage the input into {t.name} at the start of the job and read it there: "
                "nothing the job writes has to outlive it, so losing it at the end costs you "
                f"nothing{spent(best, in_all=True)}."
            )
        return (
            f"Work in {t.name}: nothing has to outlive the job, so losing it at the end costs "
            f"you nothing{spent(best)}."
        )
    if q.must_outlive_job and not best.keeps:
        return staged(best, q, keeper)
    if Tag.LIGHT in job_tags(q) and best.cost.seconds is None:
        return f"Keep these files on {t.name}: the job does little I/O."
    if q.access is Access.SEQUENTIAL and q.file_shape is FileShape.FEW_LARGE:
        text = f"Read and write the data directly on {t.name}, in large blocks{spent(best)}"
        staging = [v for v in verdicts if v.fits and v.cost.copies and v.cost.seconds]
        seconds = best.cost.seconds
        if seconds and staging and all((v.cost.seconds or 0) >= seconds for v in staging):
            text += "; staging it through another target would only add a copy"
        return text + "."
    return f"Work on the data directly on {t.name}{spent(best)}."


def staged(best: Verdict, q: Question, keeper: TargetFacts | None) -> str:
    """Work on a target whose data does not outlive the job, results copied back."""
    t = best.facts
    if keeper is None:
        return (
            f"Work in {t.name}, but first make room for the results: no target here that "
            f"keeps them can take {gib(q.data_gib)} within its quota."
        )
    if t.persistent:  # kept for a while, but purged, or not for results by the site
        why = (
            f"it does not keep files for good ({t.purge})"
            if t.purge
            else f"the site advises against it for {advised_against(t, {Tag.RESULTS})}"
        )
        return (
            f"Work on the data on {t.name} and copy the results you keep to {keeper.name}, as "
            f"{why}{spent(best, in_all=True)}."
        )
    if q.reads_input is False:  # a job that only writes has nothing to stage in
        text = (
            f"Write in {t.name} while the job runs, and copy the results back to "
            f"{keeper.name} before the job ends{spent(best, in_all=True)}."
        )
    else:
        text = (
            f"Stage the input into {t.name} at the start of the job, work on it there, "
            f"and copy the results back to {keeper.name} before the job ends"
            f"{spent(best, in_all=True)}."
        )
    if q.file_shape is FileShape.MANY_SMALL:
        text += (
            " Pack the results into one archive (tar) for the copy: a parallel "
            "filesystem creates thousands of small files slowly."
        )
    return text


def copy_kept(
    best: Verdict, verdicts: list[Verdict], q: Question, keeper: TargetFacts | None
) -> str:
    """Where the results end up has no redundancy: where a copy of them is safe."""
    if not q.must_outlive_job:
        return ""
    home = best.facts if keeps_results(best.facts) else keeper
    if home is None or redundant(home):
        return ""
    safe = next(
        (
            v.facts
            for v in verdicts
            if v.facts is not home
            and keeps_results(v.facts)
            and redundant(v.facts)
            and v.facts.shared  # a copy on one node's disk is out of reach of the others
            and v.block is not Block.QUOTA
        ),
        None,
    )
    it = "It" if home is best.facts else home.name
    if safe is None:
        return (
            f"{it} has no redundancy, nor has any other target here: keep a copy of what you "
            "cannot make again off this cluster."
        )
    return f"{it} has no redundancy, so keep a copy of what matters on {safe.name}."


def passed_over(best: Verdict, verdicts: list[Verdict]) -> str:
    """The target visibly cheaper than the first, the cheapest of them, and why it is
    not first: what blocks it, its quota, the copies it needs (then its own I/O is
    what is cheaper), or the site's advice."""
    seconds = best.cost.seconds
    if seconds is None:
        return ""

    def copies_why(v: Verdict) -> bool:  # it fits; what it costs is its copies
        return v.fits and not v.full and v.cost.copies is not None

    def own(v: Verdict) -> float | None:
        return v.cost.work_seconds if copies_why(v) else v.cost.seconds

    cheaper = [
        v for v in verdicts[1:] if (o := own(v)) is not None and o * VISIBLY_CHEAPER <= seconds
    ]
    if not cheaper:
        return ""
    # A quota raise or a node with more memory is asked for; a node-local target for
    # data nodes share, or the site's advice against it, is not: said after those.
    cheap = min(cheaper, key=lambda v: (v.block >= Block.ADVISED, own(v) or 0.0))
    name, copies = cheap.facts.name, cheap.cost.copies
    if not cheap.fits:
        why = cheap.blockers[0].rstrip(".")
        why = why[0].lower() + why[1:] if why.startswith("The ") else why
    elif cheap.full and cheap.share is not None:
        why = f"the data would fill {cheap.share:.0%} of its default quota"
    elif copies is not None and (cheap.cost.seconds or 0.0) >= seconds:
        why = f"{lost(cheap)}: {copies.said(timed=False)} adds {took(copies.seconds)}"
    elif best.recommended_phrase:
        why = f"the site recommends {best.facts.name} for {best.recommended_phrase}"
    else:
        why = f"the site's advice and their nature put {best.facts.name} first"
    parts = cheap.cost.work
    alone = copies is None or copies_why(cheap)  # its time is its own I/O's
    at = (
        f" (at {speed(parts[0].value)})"
        if alone and len(parts) == 1 and parts[0].unit == "MiB/s"
        else ""
    )
    return f"On {name} the job's I/O would take {took(own(cheap) or 0.0)}{at}, but {why}."


def lost(v: Verdict) -> str:
    t = v.facts
    if not t.persistent:
        return f"{t.name} is emptied when the job ends"
    if t.purge:
        return f"{t.name} does not keep files for good ({t.purge})"
    return f"the site advises against {t.name} for {advised_against(t, {Tag.RESULTS})}"


def no_fit_plan(verdicts: list[Verdict], q: Question) -> str:
    best = verdicts[0]
    t = best.facts
    if best.block is Block.QUOTA and t.quota_gib is not None:
        plan = (
            f"Nothing fits as it stands: {t.name} comes closest, but its default quota "
            f"is {gib(t.quota_gib)}, so ask the administrators to raise it to at least "
            f"{gib(q.data_gib)}."
        )
    elif best.block is Block.ADVISED:
        plan = (
            f"No target suits this job as it stands; {t.name} comes closest, but the site "
            f"advises against it for {best.advised_phrase}."
        )
    else:
        return f"No target here can take this job: {best.blockers[0]}"
    if best.cost.seconds is not None:
        plan += (
            f" There the job's I/O would take {duration(best.cost.seconds)} ({best.cost.said()})."
        )
    # More memory is worth mentioning only where memory would be the better choice.
    memory = next(
        (w for w in verdicts if w.memory_blocked and len(w.blockers) == 1 and w.score > best.score),
        None,
    )
    if memory:
        plan += f" On a node with more memory, {memory.facts.name} could hold the data."
    return plan
