"""The plan: one or two sentences on how to use the best target, and where results
live on after a job in memory."""

from collections.abc import Sequence

from exercises.advisor.judge import Block, Verdict
from exercises.advisor.question import Access, FileShape, Question, TargetFacts
from exercises.advisor.words import (
    Tag,
    advised_against,
    gib,
    job_tags,
    over_quota,
    phrase_tags,
    redundant,
)

# --- where results live on ------------------------------------------------------


def keeper_of(targets: Sequence[TargetFacts], q: Question) -> TargetFacts | None:
    """The persistent target results go back to after a job in memory: one with
    room for them, redundant, shared, with headroom under its quota, named by the
    site as a place for results, fit for I/O-intensive work, and fast at streaming
    (the copy is one sequential pass)."""

    def rank(t: TargetFacts) -> tuple[bool, bool, bool, bool, bool, float]:
        headroom = t.quota_gib is None or q.data_gib <= t.quota_gib / 2
        for_results = any(Tag.RESULTS in phrase_tags(p) for p in t.use_for)
        heavy_ok = advised_against(t, {Tag.HEAVY}) is None
        speed = t.sequential_mib_s or 0.0
        return (redundant(t), t.shared, headroom, for_results, heavy_ok, speed)

    candidates = [t for t in targets if t.persistent and not over_quota(t, q)]
    return max(candidates, key=rank, default=None)


# --- the plan -------------------------------------------------------------------


def plan(verdicts: list[Verdict], q: Question, keeper: TargetFacts | None) -> str:
    best = verdicts[0]
    t = best.facts
    if best.block is not Block.NONE:
        return no_fit_plan(verdicts, q)
    if not t.persistent:
        if not q.must_outlive_job:
            if q.reads_input:
                return (
                    f"Stage the input into {t.name} at the start of the job and read it "
                    "there: nothing the job writes has to outlive it, so losing it at the "
                    "end costs you nothing."
                )
            return (
                f"Work in {t.name}: nothing has to outlive the job, so losing it at the end "
                "costs you nothing."
            )
        if keeper is None:
            return (
                f"Work in {t.name}, but first make room for the results: no persistent "
                f"target here can take {gib(q.data_gib)} within its quota."
            )
        if q.reads_input is False:  # a job that only writes has nothing to stage in
            plan = (
                f"Write in {t.name} while the job runs, and copy the results back to "
                f"{keeper.name} before the job ends."
            )
        else:
            plan = (
                f"Stage the input into {t.name} at the start of the job, work on it there, "
                f"and copy the results back to {keeper.name} before the job ends."
            )
        if q.file_shape is FileShape.MANY_SMALL:
            plan += (
                " Pack the results into one archive (tar) for the copy: a parallel "
                "filesystem creates thousands of small files slowly."
            )
        return plan
    if Tag.LIGHT in job_tags(q):
        plan = f"Keep these files on {t.name}: the job does little I/O, so speed hardly matters."
    elif q.access is Access.SEQUENTIAL and q.file_shape is FileShape.FEW_LARGE:
        plan = (
            f"Read and write the data directly on {t.name}, in large blocks; staging it "
            "through another target would only add a copy."
        )
    else:
        plan = f"Work on the data directly on {t.name}."
    if not redundant(t):
        safe = keeper is not None and keeper is not t and redundant(keeper)
        other = keeper.name if safe and keeper else "a redundant target"
        return f"{plan} It has no redundancy, so keep a copy of what matters on {other}."
    # A target the job would prefer, held back only by its quota, is worth asking for.
    better = next((w for w in verdicts if w.block is Block.QUOTA and w.score > best.score), None)
    if better and better.facts.quota_gib is not None:
        plan += (
            f" {better.facts.name} would suit it better once its "
            f"{gib(better.facts.quota_gib)} default quota is raised."
        )
    return plan


def no_fit_plan(verdicts: list[Verdict], q: Question) -> str:
    best = verdicts[0]
    t = best.facts
    if best.block is Block.QUOTA and t.quota_gib is not None:
        plan = (
            f"Nothing fits as it stands: {t.name} suits this job best, but its default quota "
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
    # More memory is worth mentioning only where memory would be the better choice.
    memory = next(
        (w for w in verdicts if w.memory_blocked and len(w.blockers) == 1 and w.score > best.score),
        None,
    )
    if memory:
        plan += f" On a node with more memory, {memory.facts.name} could hold the data."
    return plan
