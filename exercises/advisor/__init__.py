"""Which storage target should I use? Ranks a site's targets for a job described by
its I/O, with short reasons per target and a one- or two-sentence plan.

Pure: the caller turns StorageTargets and figures into TargetFacts (facts.py:
target_facts). The site's own advice comes in through use_for and avoid_for; the
phrases are matched by keyword (see KEYWORDS), so a profile speaks
to the advisor by using words like "random", "small files", "I/O-intensive".

How a target is judged:
1. What cannot work, or is against the site's rules, makes fits=False and sends
   it down the ranking: memory for in-memory targets, node-local targets when nodes
   share data, the quota, and an avoid_for phrase that matches the job.
2. What the job's I/O would cost on each target (judge.py: cost_of): its bytes, and
   its files where they are many, at the site's quiet figures (the calibration's
   medians, else the published ones), plus copying results to a target that keeps
   them (and staging input in) where they would not outlive the job. Fitting targets
   are ranked by it; a target whose data would fill its quota comes after those with
   room, and one without a figure after those with one.
3. The site's advice (use_for phrases) and the target's nature only break near ties
   of cost (NEAR_TIE), and let a light job stay where the site keeps light work when
   its I/O there takes seconds (words.py: TRIFLING_SECONDS); the plan then says both
   times. They alone order targets without a figure, and those that do not fit.

The package: question.py (what is asked and answered), words.py (the site's
phrases, read by keyword), judge.py (one target), plan.py (the plan); advise()
below puts them together.
"""

from collections.abc import Sequence
from dataclasses import replace

from exercises.advisor.judge import Block, Verdict, cost_of, judge
from exercises.advisor.plan import keeper_of, plan
from exercises.advisor.question import (
    Access,
    Advice,
    FileShape,
    Question,
    Recommendation,
    TargetFacts,
)
from exercises.advisor.words import TRIFLING_SECONDS, Tag, gib, job_tags

# Costs within this factor of the cheapest fitting target's are a near tie: the
# site's advice decides between them. The first target is so never 3x slower than one
# that fits and keeps results, but for a light job's trifling I/O, said in the plan.
NEAR_TIE = 1.5

NO_TARGETS_PLAN = (
    "This site has no storage targets set up yet, so there is nothing to recommend: "
    "ask the administrators which filesystems to use."
)


def advise(targets: Sequence[TargetFacts], question: Question) -> Advice:
    if not targets:
        return Advice(ranking=(), plan=NO_TARGETS_PLAN)
    tags = job_tags(question)
    keeper = keeper_of(targets, question)
    # Figures are compared with the site's usual place for job data, whatever the size.
    usual = keeper_of(targets, replace(question, data_gib=0))
    measured = any(cost_of(t, question, keeper).seconds is not None for t in targets)
    verdicts = [judge(t, question, tags, keeper, usual, measured) for t in targets]
    ranked = order(verdicts, light=Tag.LIGHT in tags)
    return Advice(
        ranking=tuple(v.recommendation() for v in ranked),
        plan=first_cannot_run(question, plan(ranked, question, keeper)),
    )


def order(verdicts: list[Verdict], light: bool) -> list[Verdict]:
    """Fitting targets with room, by cost; then those the data would fill; each with
    those without a figure last, by the site's advice. Then those that do not fit, the
    mildest block first, by the site's advice: a quota raise or another node is asked
    of the target the site would have the job on. Equal ones keep the site's order."""

    def group(v: Verdict) -> tuple[Block, bool, bool]:
        if not v.fits:
            return (v.block, False, False)
        return (v.block, v.full, v.cost.seconds is None)

    ranked: list[Verdict] = []
    for key in sorted({group(v) for v in verdicts}):
        members = [v for v in verdicts if group(v) == key]
        if key[0] is Block.NONE and not key[2]:
            ranked += by_cost(members, light)
        else:
            ranked += sorted(members, key=lambda v: (-v.score, v.cost.seconds or 0.0))
    return ranked


def by_cost(verdicts: list[Verdict], light: bool) -> list[Verdict]:
    """Cheapest first, but among those within NEAR_TIE of the cheapest left (and, for
    a light job, those whose I/O is trifling) the site's advice picks."""
    left, ranked = list(verdicts), []
    while left:
        cheapest = min(v.cost.seconds or 0.0 for v in left)
        near = [
            v
            for v in left
            if (seconds := v.cost.seconds or 0.0) <= cheapest * NEAR_TIE
            or (light and seconds <= TRIFLING_SECONDS)
        ]
        pick = max(near, key=lambda v: (v.score, -(v.cost.seconds or 0.0)))
        ranked.append(pick)
        left.remove(pick)
    return ranked


def first_cannot_run(q: Question, plan: str) -> str:
    """What no storage can fix, said before the plan: a program bigger than a node."""
    if q.app_memory_gib <= q.node_memory_gib:
        return plan
    return (
        f"First: the program alone needs {gib(q.app_memory_gib)}, more than a node's "
        f"{gib(q.node_memory_gib)}, so it cannot run on these nodes at all, whatever the "
        "storage: ask for nodes with more memory or make the program need less. Once it "
        f"runs: {plan[:1].lower()}{plan[1:]}"
    )


__all__ = [
    "NO_TARGETS_PLAN",
    "Access",
    "Advice",
    "FileShape",
    "Question",
    "Recommendation",
    "TargetFacts",
    "advise",
]
