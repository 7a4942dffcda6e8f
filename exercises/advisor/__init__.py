"""Which storage target should I use? Ranks a site's targets for a job described by
its I/O, with short reasons per target and a one- or two-sentence plan.

Pure: the caller turns StorageTargets and figures into TargetFacts (facts.py:
target_facts). The site's own advice comes in through use_for and avoid_for; the
phrases are matched by keyword (see KEYWORDS), so a profile speaks
to the advisor by using words like "random", "small files", "I/O-intensive".

How a target is judged, in order of weight:
1. What cannot work, or is against the site's rules, makes fits=False and sends
   it down the ranking: memory for in-memory targets, node-local targets when nodes
   share data, the quota, and an avoid_for phrase that matches the job.
2. Otherwise the site's use_for phrases and the target's nature (in memory helps
   random I/O and small files) count most: a reference figure is one busy
   afternoon's measurement, the site's advice is its experience.
3. The figures order what is left, on a log scale (a 2x difference matters as
   much at 50 MiB/s as at 5,000).

The package: question.py (what is asked and answered), words.py (the site's
phrases, read by keyword), judge.py (one target), plan.py (the plan); advise()
below puts them together.
"""

from collections.abc import Sequence
from dataclasses import replace

from exercises.advisor.judge import Scale, figure_for, judge
from exercises.advisor.plan import keeper_of, plan
from exercises.advisor.question import (
    Access,
    Advice,
    FileShape,
    Question,
    Recommendation,
    TargetFacts,
)
from exercises.advisor.words import gib, job_tags

NO_TARGETS_PLAN = (
    "This site has no storage targets set up yet, so there is nothing to recommend: "
    "ask the administrators which filesystems to use."
)


def advise(targets: Sequence[TargetFacts], question: Question) -> Advice:
    if not targets:
        return Advice(ranking=(), plan=NO_TARGETS_PLAN)
    tags = job_tags(question)
    scale = Scale.of([figure_for(t, question) for t in targets])
    keeper = keeper_of(targets, question)
    # Figures are compared with the site's usual place for job data, whatever the size.
    usual = keeper_of(targets, replace(question, data_gib=0))
    verdicts = [judge(t, question, tags, scale, usual) for t in targets]
    # Stable: equal scores keep the site's display order.
    verdicts.sort(key=lambda v: (v.block, -v.score))
    return Advice(
        ranking=tuple(v.recommendation() for v in verdicts),
        plan=first_cannot_run(question, plan(verdicts, question, keeper)),
    )


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
