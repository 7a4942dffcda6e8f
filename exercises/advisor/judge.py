"""One target's verdict for one job: what blocks it, what speaks for it, its figure."""

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import IntEnum

from exercises.advisor.question import Access, FileShape, Question, Recommendation, TargetFacts
from exercises.advisor.words import (
    USE_WEIGHT,
    Tag,
    advised_against,
    gib,
    phrase_tags,
    redundant,
    small_io,
    speed,
)
from portal.units import ratio_as_shown, times

# Above this share of the quota there is no room left for results and temporaries.
TIGHT_QUOTA = 0.8
# Weights of the score. Site advice and the nature of the target outweigh figures.
W_FIGURES = 30.0
W_IN_MEMORY_SMALL_IO = 40.0  # no seeks and no network round trips per request
W_IN_MEMORY_OTHER = 10.0


# --- figures --------------------------------------------------------------------


def figure_for(t: TargetFacts, q: Question) -> float | None:
    """The figure that matters for this job: random for random I/O and small files
    (each file is a few small requests), sequential for streaming, both for mixed; for
    a job, its resembling exercise's."""
    if t.job_label:
        return t.job_mib_s
    if q.access is Access.RANDOM or q.file_shape is FileShape.MANY_SMALL:
        return t.random_mib_s
    if q.access is Access.SEQUENTIAL:
        return t.sequential_mib_s
    known = [v for v in (t.sequential_mib_s, t.random_mib_s) if v]
    return math.prod(known) ** (1 / len(known)) if known else None


def figure_label(q: Question) -> str:
    if q.access is Access.RANDOM or q.file_shape is FileShape.MANY_SMALL:
        return "random 4 KiB writes"
    if q.access is Access.SEQUENTIAL:
        return "sequential writes"
    return "sequential and random writes combined"


@dataclass(frozen=True)
class Scale:
    """Places a figure between the slowest (0) and fastest (1) target, on a log
    scale. Unknown figures sit in the middle: neither rewarded nor punished."""

    low: float | None
    high: float | None

    @classmethod
    def of(cls, values: Sequence[float | None]) -> "Scale":
        known = [v for v in values if v and v > 0]
        return cls(min(known, default=None), max(known, default=None))

    def position(self, value: float | None) -> float:
        if not value or self.low is None or self.high is None or self.high <= self.low:
            return 0.5
        return math.log(value / self.low) / math.log(self.high / self.low)


# --- one target -----------------------------------------------------------------


class Block(IntEnum):
    """Why a target cannot be used as it stands, mildest first: the ranking lists
    fitting targets, then those a quota request would open, then those the site
    advises against, then those that cannot work at all."""

    NONE = 0
    QUOTA = 1
    ADVISED = 2
    IMPOSSIBLE = 3


@dataclass
class Verdict:
    facts: TargetFacts
    block: Block = Block.NONE
    score: float = 0.0
    blockers: list[str] = field(default_factory=list)  # why it cannot be used as it stands
    notes: list[str] = field(default_factory=list)  # what speaks for it, and its figure
    cautions: list[str] = field(default_factory=list)  # what to watch out for
    advised_phrase: str = ""
    memory_blocked: bool = False

    def stop(self, block: Block, reason: str) -> None:
        self.block = max(self.block, block)
        self.blockers.append(reason)

    def recommendation(self) -> Recommendation:
        return Recommendation(
            target_key=self.facts.key,
            target_name=self.facts.name,
            score=round(self.score, 1),
            reasons=tuple(self.blockers + self.notes + self.cautions),
            fits=self.block is Block.NONE,
        )


def memory_problem(t: TargetFacts, q: Question) -> str | None:
    node, cap = q.node_memory_gib, t.memory_fraction * q.node_memory_gib
    if q.data_gib + q.app_memory_gib > node:
        return (
            f"{t.name} lives in the node's memory: {gib(q.data_gib)} of data plus "
            f"{gib(q.app_memory_gib)} for the program is more than the node's {gib(node)}."
        )
    if q.data_gib > cap:
        return (
            f"{t.name} can hold at most {gib(cap)} ({t.memory_fraction:.0%} of the node's "
            f"{gib(node)}), less than the {gib(q.data_gib)} of data."
        )
    return None


def memory_fit(t: TargetFacts, q: Question) -> str:
    """The data fits: said against the tighter of the two limits, the target's quota
    or its share of the node's memory."""
    cap = t.memory_fraction * q.node_memory_gib
    if t.quota_gib is not None and t.quota_gib < cap:
        text = (
            f"The data fits in {t.name}: {gib(q.data_gib)} is within its {gib(t.quota_gib)} "
            f"default quota, in the node's {gib(q.node_memory_gib)} of memory"
        )
    else:
        text = (
            f"The data fits in {t.name}: {gib(q.data_gib)} is within its {gib(cap)} limit "
            f"({t.memory_fraction:.0%} of the node's {gib(q.node_memory_gib)})"
        )
    if q.app_memory_gib:
        return f"{text}, and the program's {gib(q.app_memory_gib)} still fits beside it."
    return f"{text}."


def judge(
    t: TargetFacts, q: Question, tags: set[Tag], scale: Scale, usual: TargetFacts | None
) -> Verdict:
    v = Verdict(t)
    light = Tag.LIGHT in tags

    # 1. What cannot work, or is against the site's rules.
    if q.shared_between_nodes and not t.shared:
        v.stop(Block.IMPOSSIBLE, f"{t.name} is local to each node: other nodes cannot see it.")
    within_quota = t.quota_gib is None or q.data_gib <= t.quota_gib
    if t.in_memory:
        problem = memory_problem(t, q)
        if problem:
            v.stop(Block.IMPOSSIBLE, problem)
            v.memory_blocked = True
        elif within_quota:  # else the quota below is what stops it: one limit, not two
            v.notes.append(memory_fit(t, q))
    if t.quota_gib is not None:
        share = q.data_gib / t.quota_gib if t.quota_gib else (math.inf if q.data_gib else 0.0)
        if share > 1:
            v.stop(
                Block.QUOTA,
                f"{gib(q.data_gib)} is more than the {gib(t.quota_gib)} default quota on "
                f"{t.name}; ask the administrators to raise it.",
            )
            # The bigger the increase, the less likely it is granted.
            v.score -= 10 * math.log10(min(share, 1e6))
        elif share > TIGHT_QUOTA:
            v.cautions.append(
                f"The data would fill {share:.0%} of the {gib(t.quota_gib)} default quota on "
                f"{t.name}, leaving little room for results."
            )
            v.score -= 5
    advised = advised_against(t, tags)
    if advised:
        v.advised_phrase = advised
        v.stop(Block.ADVISED, f"The site advises against {t.name} for {advised}.")
        # Heavy I/O on a target meant for light use slows everyone who shares it.
        v.score -= 20 if Tag.HEAVY in phrase_tags(advised) else 10

    # 2. The site's advice and the nature of the target.
    matched = [(p, phrase_tags(p) & tags) for p in t.use_for]
    matched = [(p, m) for p, m in matched if m]
    if matched:
        v.score += sum(USE_WEIGHT.get(tag, 0.0) for tag in set().union(*(m for _, m in matched)))
        best_phrase = max(matched, key=lambda pm: max(USE_WEIGHT.get(x, 0.0) for x in pm[1]))[0]
        v.notes.append(f"The site recommends {t.name} for {best_phrase}.")
    if t.in_memory:
        if small_io(tags):
            v.score += W_IN_MEMORY_SMALL_IO
            v.notes.append(
                f"{t.name} is RAM: small and random requests cost no seek or round trip."
            )
        else:
            v.score += W_IN_MEMORY_OTHER
    if not t.persistent:
        if q.must_outlive_job:
            # Staging pays off only where it saves many small requests; for a light
            # job or a single streaming pass it just adds a copy.
            v.score -= 30 if light else (10 if small_io(tags) else 25)
            v.cautions.append(f"{t.name} is emptied when the job ends: copy results elsewhere.")
        else:
            v.score += 5
            v.notes.append(f"{t.name} is cleaned up after the job, fine for data you won't keep.")
    elif not redundant(t):
        v.score -= 15 if light else 5
        v.cautions.append(f"{t.name} has no redundancy: keep a copy elsewhere.")

    # 3. The figures; for a light job speed hardly matters.
    weight = W_FIGURES / 6 if light else W_FIGURES
    figure = figure_for(t, q)
    v.score += weight * scale.position(figure)
    label = t.job_label or figure_label(q)
    if figure is None:
        v.notes.append(f"No {label} figure for {t.name} yet, so its facts alone rank it.")
    else:
        text = f"{label[0].upper()}{label[1:]}: {speed(figure)}"
        if usual is not None and usual is not t:
            ratio = ratio_as_shown(figure, figure_for(usual, q) or 0)
            if ratio and ratio >= 1.5:
                text += f", {times(ratio)} {usual.name}"
        v.notes.append(text + ".")
    return v
