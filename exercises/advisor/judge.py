"""One target's verdict for one job: what blocks it, what the job's I/O would cost
there (copies to a target that keeps results included), and what speaks for it."""

import math
from dataclasses import dataclass, field
from enum import IntEnum

from exercises.advisor.question import Access, FileShape, Question, Recommendation, TargetFacts
from exercises.advisor.words import (
    USE_WEIGHT,
    Tag,
    advised_against,
    duration,
    gib,
    keeps_results,
    phrase_tags,
    redundant,
    size,
    small_io,
    took,
)
from jobs.figures import shown
from portal.units import GiB, KiB, MiB, ratio_as_shown, times

# Above this share of the quota there is no room left for results and temporaries.
TIGHT_QUOTA = 0.8
# What the site's advice and a target's nature weigh. They order targets without a
# figure and break near ties of cost (advise: NEAR_TIE); figures give no points.
W_IN_MEMORY_SMALL_IO = 40.0  # no seeks and no network round trips per request
W_IN_MEMORY_OTHER = 10.0
# Many small files and no count given: counted as files of this size.
SMALL_FILE_GUESS = 64 * KiB
# Where the site has no file-create figure, each file costs one small random request.
FILE_REQUEST = 4 * KiB


# --- what the job's I/O costs ----------------------------------------------------


@dataclass(frozen=True)
class Part:
    """One piece of a cost: an amount moved at one figure of the site."""

    label: str  # "sequential writes"; a copy's: "$GLOBAL's sequential writes"
    value: float
    unit: str  # "MiB/s", or "files per second" for creates
    source: str  # "exercise 1a, measured here by calibration round 3 on ..."
    amount: str  # "1 GiB", "half of 20 GiB", "16,384 files"
    seconds: float

    def said(self, timed: bool = True) -> str:
        """'1 GiB at 197.0 MiB/s in 5.2 s'."""
        text = f"{self.amount} at {shown(self.value)} {self.unit}"
        return f"{text} in {took(self.seconds)}" if timed else text

    def quoted(self, target: str) -> str:
        """The figure and where it comes from, as the page lists it."""
        label = self.label if self.label.startswith("$") else f"{target}'s {self.label}"
        return f"{label[0].upper()}{label[1:]}, {shown(self.value)} {self.unit}: {self.source}."


@dataclass(frozen=True)
class Cost:
    work: tuple[Part, ...] = ()  # the job's I/O on the target
    copies: Part | None = None  # staging in and out, at the keeper's streaming figure
    missing: str = ""  # the figure it lacks: then there is no cost

    @property
    def work_seconds(self) -> float | None:
        return sum(p.seconds for p in self.work) if self.work else None

    @property
    def seconds(self) -> float | None:
        if self.missing or not self.work:
            return None
        return sum(p.seconds for p in self.work) + (self.copies.seconds if self.copies else 0)

    def said(self, copies: bool = True) -> str:
        """'1 GiB at 197.0 MiB/s'; of several parts, each with its time, joined."""
        parts = [*self.work, *([self.copies] if copies and self.copies else [])]
        said = [p.said(timed=len(parts) > 1) for p in parts]
        return said[0] if len(said) == 1 else ", ".join(said[:-1]) + " and " + said[-1]


def file_count(q: Question) -> int:
    return q.file_count or max(1, round(q.data_gib * GiB / SMALL_FILE_GUESS))


def work_parts(t: TargetFacts, q: Question) -> tuple[tuple[Part, ...], str]:
    """The job's I/O on t: its bytes at the figure of their kind (sequential, random
    4 KiB, half of each for mixed; for a job, the exercise it resembles), and many
    small files each at the site's create rate, else as one small random request.
    Or the figure that is missing."""
    mib, data = q.data_gib * 1024, size(q.data_gib)
    if t.job_label:
        if not t.job_mib_s:
            return (), f"no {t.job_label} figure for {t.name} yet"
        job = Part(t.job_label, t.job_mib_s, "MiB/s", t.job_source, data, mib / t.job_mib_s)
        return (job,), ""
    seq = ("sequential writes", t.sequential_mib_s, t.sequential_source)
    rand = ("random 4 KiB writes", t.random_mib_s, t.random_source)
    wanted = {
        Access.SEQUENTIAL: [(*seq, data, 1.0)],
        Access.RANDOM: [(*rand, data, 1.0)],
        Access.MIXED: [(*seq, f"half of {data}", 0.5), (*rand, "the other half", 0.5)],
    }[q.access]
    parts = []
    for label, value, source, amount, share in wanted:
        if not value:
            return (), f"no {label} figure for {t.name} yet"
        parts.append(Part(label, value, "MiB/s", source, amount, mib * share / value))
    if q.file_shape is FileShape.MANY_SMALL:
        files = file_count(q)
        counted = f"{files:,} files"
        if not q.file_count:
            counted += f" of {size(SMALL_FILE_GUESS / GiB)} (no count was given)"
        if t.create_ops_s:
            seconds = files / t.create_ops_s
            unit = "files per second"
            parts.append(
                Part("file creates", t.create_ops_s, unit, t.create_source, counted, seconds)
            )
        elif t.random_mib_s:
            # Without a figure of file creates, each file is one small random request.
            seconds = files * FILE_REQUEST / MiB / t.random_mib_s
            amount = f"{counted}, a 4 KiB write each"
            parts.append(Part(rand[0], t.random_mib_s, "MiB/s", rand[2], amount, seconds))
        else:
            return (), f"no file-create or random 4 KiB writes figure for {t.name} yet"
    return tuple(parts), ""


def copying(t: TargetFacts, q: Question) -> str:
    """Which way the job's data must be copied to use t: "in and out", "out" (results
    to a target that keeps them), "in" (input onto a node's own storage), or ""."""
    if q.must_outlive_job and not keeps_results(t):
        # A job that only writes has nothing to stage in; input may live on a
        # persistent target that merely does not keep results.
        return "out" if q.reads_input is False or t.persistent else "in and out"
    if not q.must_outlive_job and not t.persistent and q.reads_input:
        return "in"
    return ""


COPIES = {
    "in and out": "{data} copied in from and back to {keeper}",
    "out": "{data} of results copied back to {keeper}",
    "in": "{data} of input staged in from {keeper}",
}


def cost_of(t: TargetFacts, q: Question, keeper: TargetFacts | None) -> Cost:
    """The seconds of the job's I/O on t at the site's quiet figures, and of the copies
    it needs there at the streaming figure of the target that keeps results (the data
    the job reads or writes, in and out together)."""
    work, missing = work_parts(t, q)
    way = copying(t, q)
    if not way or keeper is None or keeper is t:
        return Cost(work, None, missing)
    if not keeper.sequential_mib_s:
        return Cost(work, None, missing or f"no sequential writes figure for {keeper.name} yet")
    copy = Part(
        f"{keeper.name}'s sequential writes", keeper.sequential_mib_s, "MiB/s",
        keeper.sequential_source, COPIES[way].format(data=size(q.data_gib), keeper=keeper.name),
        q.data_gib * 1024 / keeper.sequential_mib_s,
    )  # fmt: skip
    return Cost(work, copy, missing)


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
    cost: Cost = field(default_factory=Cost)
    keeps: bool = True  # what the job must keep outlives it here
    block: Block = Block.NONE
    score: float = 0.0  # the site's advice and the target's nature: no figure counts
    share: float | None = None  # of the default quota the data would take
    blockers: list[str] = field(default_factory=list)  # why it cannot be used as it stands
    notes: list[str] = field(default_factory=list)  # what speaks for it, and its figures
    cautions: list[str] = field(default_factory=list)  # what to watch out for
    advised_phrase: str = ""
    recommended_phrase: str = ""  # the site's use_for phrase that matches the job
    memory_blocked: bool = False

    @property
    def full(self) -> bool:
        return self.share is not None and TIGHT_QUOTA < self.share <= 1

    @property
    def fits(self) -> bool:
        return self.block is Block.NONE

    def stop(self, block: Block, reason: str) -> None:
        self.block = max(self.block, block)
        self.blockers.append(reason)

    def cost_words(self) -> str:
        seconds = self.cost.seconds
        if seconds is None:
            return f"This job's I/O here: not known: there is {self.cost.missing}."
        return f"This job's I/O here: {duration(seconds)}: {self.cost.said()}."

    def recommendation(self) -> Recommendation:
        parts = [*self.cost.work, *([self.cost.copies] if self.cost.copies else [])]
        # Each figure once, with its source; a caller's figure without one (a job's,
        # exercises/advisor/job.py) is said where that caller says its source.
        quoted = tuple(dict.fromkeys(p.quoted(self.facts.name) for p in parts if p.source))
        return Recommendation(
            target_key=self.facts.key,
            target_name=self.facts.name,
            score=round(self.score, 1),
            reasons=tuple(self.blockers + self.notes + self.cautions),
            fits=self.fits,
            seconds=self.cost.seconds,
            cost=self.cost_words(),
            figures=quoted,
            quota_share=self.share,
            full=self.full,
            keeps_results=self.keeps,
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


def quota(v: Verdict, q: Question) -> None:
    t = v.facts
    if t.quota_gib is None:
        return
    v.share = q.data_gib / t.quota_gib if t.quota_gib else (math.inf if q.data_gib else 0.0)
    if v.share > 1:
        v.stop(
            Block.QUOTA,
            f"{gib(q.data_gib)} is more than the {gib(t.quota_gib)} default quota on "
            f"{t.name}; ask the administrators to raise it.",
        )
        # The bigger the increase, the less likely it is granted.
        v.score -= 10 * math.log10(min(v.share, 1e6))
    elif v.full:
        v.cautions.append(
            f"The data would fill {v.share:.0%} of the {gib(t.quota_gib)} default quota on "
            f"{t.name}, leaving little room for results."
        )
        v.score -= 5


def survival(v: Verdict, q: Question, light: bool, tags: set[Tag]) -> None:
    """Whether results outlive the job here, and its redundancy."""
    t = v.facts
    if q.must_outlive_job and not v.keeps:
        # Staging pays off only where it saves many small requests; for a light job or
        # a single streaming pass it just adds a copy (the cost counts it where a
        # figure does; this orders targets without one).
        v.score -= 30 if light else (10 if small_io(tags) else 25)
        if not t.persistent:
            v.cautions.append(f"{t.name} is emptied when the job ends: copy results elsewhere.")
        elif t.purge:
            v.cautions.append(
                f"{t.name} does not keep files for good ({t.purge}): copy the results you keep "
                "elsewhere."
            )
        else:
            phrase = advised_against(t, {Tag.RESULTS})
            v.cautions.append(
                f"The site advises against {t.name} for {phrase}: copy the results you keep "
                "elsewhere."
            )
    elif not t.persistent:
        v.score += 5
        v.notes.append(f"{t.name} is cleaned up after the job, fine for data you won't keep.")
    if t.persistent and not redundant(t):
        v.score -= 15 if light else 5
        v.cautions.append(f"{t.name} has no redundancy: keep a copy elsewhere.")


def advice(v: Verdict, tags: set[Tag]) -> None:
    """The site's advice for and against it, and what its nature does for the job."""
    t = v.facts
    advised = advised_against(t, tags)
    if advised:
        v.advised_phrase = advised
        v.stop(Block.ADVISED, f"The site advises against {t.name} for {advised}.")
        # Heavy I/O on a target meant for light use slows everyone who shares it.
        v.score -= 20 if Tag.HEAVY in phrase_tags(advised) else 10
    matched = [(p, phrase_tags(p) & tags) for p in t.use_for]
    matched = [(p, m) for p, m in matched if m]
    if matched:
        v.score += sum(USE_WEIGHT.get(tag, 0.0) for tag in set().union(*(m for _, m in matched)))
        best = max(matched, key=lambda pm: max(USE_WEIGHT.get(x, 0.0) for x in pm[1]))[0]
        v.recommended_phrase = best
        v.notes.append(f"The site recommends {t.name} for {best}.")
    if t.in_memory:
        if small_io(tags):
            v.score += W_IN_MEMORY_SMALL_IO
            v.notes.append(
                f"{t.name} is RAM: small and random requests cost no seek or round trip."
            )
        else:
            v.score += W_IN_MEMORY_OTHER


def figure_notes(v: Verdict, q: Question, usual: TargetFacts | None, any_measured: bool) -> None:
    """Each figure the job's I/O is counted by, against the site's usual place for job
    data; or that there is none, and how the target is placed without it."""
    t = v.facts
    if not v.cost.work:
        # No figure, no points for one: the site's advice and the target's nature place
        # it, after the targets with a figure.
        after = ", after the targets with one" if any_measured else ""
        missing = v.cost.missing
        v.notes.append(f"{missing[0].upper()}{missing[1:]}, so its facts alone rank it{after}.")
        return
    theirs = {p.label: p.value for p in cost_of(usual, q, None).work} if usual else {}
    for part in {p.label: p for p in v.cost.work}.values():  # a figure once
        text = f"{part.label[0].upper()}{part.label[1:]}: {shown(part.value)} {part.unit}"
        if usual is not None and usual is not t:
            ratio = ratio_as_shown(part.value, theirs.get(part.label) or 0)
            if ratio and ratio >= 1.5:
                text += f", {times(ratio)} {usual.name}"
        v.notes.append(text + ".")
    if q.file_shape is FileShape.MANY_SMALL and not t.job_label and not t.create_ops_s:
        v.notes.append(
            f"No file-create figure for {t.name}: each file is counted as one random 4 KiB write."
        )


def judge(
    t: TargetFacts,
    q: Question,
    tags: set[Tag],
    keeper: TargetFacts | None,
    usual: TargetFacts | None,
    any_measured: bool,
) -> Verdict:
    v = Verdict(t, cost=cost_of(t, q, keeper), keeps=keeps_results(t) or not q.must_outlive_job)
    light = Tag.LIGHT in tags
    # 1. What cannot work, or is against the site's rules.
    if q.shared_between_nodes and not t.shared:
        v.stop(Block.IMPOSSIBLE, f"{t.name} is local to each node: other nodes cannot see it.")
    if t.in_memory:
        problem = memory_problem(t, q)
        if problem:
            v.stop(Block.IMPOSSIBLE, problem)
            v.memory_blocked = True
        elif t.quota_gib is None or q.data_gib <= t.quota_gib:  # else the quota stops it
            v.notes.append(memory_fit(t, q))
    quota(v, q)
    # 2. The site's advice, the target's nature, whether results survive.
    advice(v, tags)
    survival(v, q, light, tags)
    # 3. The figures the cost is counted by.
    figure_notes(v, q, usual, any_measured)
    return v
