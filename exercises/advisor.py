"""Which storage target should I use? Ranks a site's targets for a job described by
its I/O, with short reasons per target and a one- or two-sentence plan.

Pure: the caller turns StorageTargets and figures into TargetFacts (see
exercises.lab.target_facts). The site's own advice comes in through use_for and
avoid_for; the phrases are matched by keyword (see _KEYWORDS), so a profile speaks
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
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from enum import IntEnum, StrEnum


@dataclass(frozen=True)
class TargetFacts:
    """One target as the advisor sees it. Figures are MiB/s of writes: sequential in
    large blocks (e.g. exercise 1b) and random in 4 KiB blocks (e.g. 2a or 2b)."""

    key: str
    name: str
    in_memory: bool
    persistent: bool
    shared: bool
    use_for: tuple[str, ...] = ()
    avoid_for: tuple[str, ...] = ()
    sequential_mib_s: float | None = None
    random_mib_s: float | None = None
    quota_gib: float | None = None
    memory_fraction: float = 0.5  # in-memory targets may hold this share of node RAM
    # False: a hardware failure can lose the data. An avoid_for phrase such as "the
    # only copy of data" says the same, for callers that only pass the phrases.
    redundant: bool = True


class Access(StrEnum):
    SEQUENTIAL = "sequential"
    RANDOM = "random"
    MIXED = "mixed"


class FileShape(StrEnum):
    FEW_LARGE = "few_large"
    MANY_SMALL = "many_small"


@dataclass(frozen=True)
class Question:
    access: Access
    file_shape: FileShape
    data_gib: float  # volume the job reads/writes / keeps
    node_memory_gib: float  # memory per node
    app_memory_gib: float = 0  # memory the program itself needs
    must_outlive_job: bool = True
    shared_between_nodes: bool = False
    file_count: int | None = None

    def __post_init__(self) -> None:
        if self.data_gib < 0 or self.app_memory_gib < 0:
            raise ValueError("data and program memory cannot be negative")
        if self.node_memory_gib <= 0:
            raise ValueError("a node needs some memory")
        if self.file_count is not None and self.file_count < 0:
            raise ValueError("the file count cannot be negative")


@dataclass(frozen=True)
class Recommendation:
    """One target's verdict. The ranking's order is the answer; score weighs the
    target's suitability regardless of what blocks it (so a target that does not
    fit may score high: it would be the best choice with more memory or quota)."""

    target_key: str
    target_name: str
    score: float
    reasons: tuple[str, ...]
    fits: bool


@dataclass(frozen=True)
class Advice:
    ranking: tuple[Recommendation, ...]  # best first; fits=False last
    plan: str


NO_TARGETS_PLAN = (
    "This site has no storage targets set up yet, so there is nothing to recommend: "
    "ask the administrators which filesystems to use."
)

# A job this small (a few config files, a small input) does too little I/O for the
# choice of filesystem to matter: the site's "non-I/O-intensive" advice applies.
LIGHT_GIB = 1.0
LIGHT_FILES = 100
# Above this share of the quota there is no room left for results and temporaries.
TIGHT_QUOTA = 0.8
# Weights of the score. Site advice and the nature of the target outweigh figures.
W_FIGURES = 30.0
W_IN_MEMORY_SMALL_IO = 40.0  # no seeks and no network round trips per request
W_IN_MEMORY_OTHER = 10.0


class _Tag(StrEnum):
    LIGHT = "light"
    HEAVY = "heavy"
    RANDOM = "random"
    SMALL_FILES = "small files"
    SEQUENTIAL = "sequential"
    UNPROTECTED = "unprotected"
    RESULTS = "results"


# Lower-case keywords of use_for/avoid_for phrases. "non-I/O-intensive" contains
# "i/o-intensive", so LIGHT wins over HEAVY (see _tags).
_KEYWORDS: tuple[tuple[str, _Tag], ...] = (
    ("non-i/o", _Tag.LIGHT),
    ("non i/o", _Tag.LIGHT),
    ("little i/o", _Tag.LIGHT),
    ("scripts", _Tag.LIGHT),
    ("configuration", _Tag.LIGHT),
    ("source code", _Tag.LIGHT),
    ("i/o-intensive", _Tag.HEAVY),
    ("i/o intensive", _Tag.HEAVY),
    ("random", _Tag.RANDOM),
    ("small files", _Tag.SMALL_FILES),
    ("sequential", _Tag.SEQUENTIAL),
    ("large files", _Tag.SEQUENTIAL),
    ("huge files", _Tag.SEQUENTIAL),
    ("streaming", _Tag.SEQUENTIAL),
    ("only copy", _Tag.UNPROTECTED),
    ("no redundancy", _Tag.UNPROTECTED),
    ("results", _Tag.RESULTS),
)
# How much a use_for phrase of each kind counts when it matches the job.
_USE_WEIGHT = {
    _Tag.LIGHT: 30.0,
    _Tag.RANDOM: 20.0,
    _Tag.SMALL_FILES: 20.0,
    _Tag.SEQUENTIAL: 20.0,
    _Tag.HEAVY: 8.0,
}


def _tags(phrase: str) -> set[_Tag]:
    text = phrase.lower().replace("io-intensive", "i/o-intensive")
    tags = {tag for word, tag in _KEYWORDS if word in text}
    if _Tag.LIGHT in tags:
        tags.discard(_Tag.HEAVY)
    return tags


def _is_light(q: Question) -> bool:
    return (
        q.access is Access.SEQUENTIAL
        and q.file_shape is FileShape.FEW_LARGE
        and q.data_gib <= LIGHT_GIB
        and (q.file_count or 0) <= LIGHT_FILES
    )


def _job_tags(q: Question) -> set[_Tag]:
    tags = {_Tag.LIGHT if _is_light(q) else _Tag.HEAVY}
    if q.access in (Access.RANDOM, Access.MIXED):
        tags.add(_Tag.RANDOM)
    if q.file_shape is FileShape.MANY_SMALL:
        tags.add(_Tag.SMALL_FILES)
    elif q.access in (Access.SEQUENTIAL, Access.MIXED):
        tags.add(_Tag.SEQUENTIAL)
    return tags


def _small_io(tags: set[_Tag]) -> bool:
    return bool(tags & {_Tag.RANDOM, _Tag.SMALL_FILES})


def _redundant(t: TargetFacts) -> bool:
    return t.redundant and not any(_Tag.UNPROTECTED in _tags(p) for p in t.avoid_for)


def _over_quota(t: TargetFacts, q: Question) -> bool:
    return t.quota_gib is not None and q.data_gib > t.quota_gib


def _advised_against(t: TargetFacts, tags: set[_Tag]) -> str | None:
    """The site's avoid_for phrase that matches this job, if any."""
    return next((p for p in t.avoid_for if _tags(p) & tags), None)


def _gib(x: float) -> str:
    return f"{x:,.0f} GiB" if x >= 10 or x == int(x) else f"{x:.2g} GiB"


def _mib_s(x: float) -> str:
    return f"{x:,.0f} MiB/s"


def _times(ratio: float) -> str:
    return f"{ratio:.1f}x" if ratio < 10 else f"{ratio:,.0f}x"


# --- figures --------------------------------------------------------------------


def _figure(t: TargetFacts, q: Question) -> float | None:
    """The figure that matters for this job: random for random I/O and small files
    (each file is a few small requests), sequential for streaming, both for mixed."""
    if q.access is Access.RANDOM or q.file_shape is FileShape.MANY_SMALL:
        return t.random_mib_s
    if q.access is Access.SEQUENTIAL:
        return t.sequential_mib_s
    known = [v for v in (t.sequential_mib_s, t.random_mib_s) if v]
    return math.prod(known) ** (1 / len(known)) if known else None


def _figure_label(q: Question) -> str:
    if q.access is Access.RANDOM or q.file_shape is FileShape.MANY_SMALL:
        return "random 4 KiB writes"
    if q.access is Access.SEQUENTIAL:
        return "sequential writes"
    return "sequential and random writes combined"


@dataclass(frozen=True)
class _Scale:
    """Places a figure between the slowest (0) and fastest (1) target, on a log
    scale. Unknown figures sit in the middle: neither rewarded nor punished."""

    low: float | None
    high: float | None

    @classmethod
    def of(cls, values: Sequence[float | None]) -> "_Scale":
        known = [v for v in values if v and v > 0]
        return cls(min(known, default=None), max(known, default=None))

    def position(self, value: float | None) -> float:
        if not value or self.low is None or self.high is None or self.high <= self.low:
            return 0.5
        return math.log(value / self.low) / math.log(self.high / self.low)


# --- where results live on ------------------------------------------------------


def _keeper(targets: Sequence[TargetFacts], q: Question) -> TargetFacts | None:
    """The persistent target results go back to after a job in memory: one with
    room for them, redundant, shared, with headroom under its quota, named by the
    site as a place for results, fit for I/O-intensive work, and fast at streaming
    (the copy is one sequential pass)."""

    def rank(t: TargetFacts) -> tuple[bool, bool, bool, bool, bool, float]:
        headroom = t.quota_gib is None or q.data_gib <= t.quota_gib / 2
        for_results = any(_Tag.RESULTS in _tags(p) for p in t.use_for)
        heavy_ok = _advised_against(t, {_Tag.HEAVY}) is None
        speed = t.sequential_mib_s or 0.0
        return (_redundant(t), t.shared, headroom, for_results, heavy_ok, speed)

    candidates = [t for t in targets if t.persistent and not _over_quota(t, q)]
    return max(candidates, key=rank, default=None)


# --- one target -----------------------------------------------------------------


class _Block(IntEnum):
    """Why a target cannot be used as it stands, mildest first: the ranking lists
    fitting targets, then those a quota request would open, then those the site
    advises against, then those that cannot work at all."""

    NONE = 0
    QUOTA = 1
    ADVISED = 2
    IMPOSSIBLE = 3


@dataclass
class _Verdict:
    facts: TargetFacts
    block: _Block = _Block.NONE
    score: float = 0.0
    blockers: list[str] = field(default_factory=list)  # why it cannot be used as it stands
    notes: list[str] = field(default_factory=list)  # what speaks for it, and its figure
    cautions: list[str] = field(default_factory=list)  # what to watch out for
    advised_phrase: str = ""
    memory_blocked: bool = False

    def stop(self, block: _Block, reason: str) -> None:
        self.block = max(self.block, block)
        self.blockers.append(reason)

    def recommendation(self) -> Recommendation:
        return Recommendation(
            target_key=self.facts.key,
            target_name=self.facts.name,
            score=round(self.score, 1),
            reasons=tuple(self.blockers + self.notes + self.cautions),
            fits=self.block is _Block.NONE,
        )


def _memory_problem(t: TargetFacts, q: Question) -> str | None:
    node, cap = q.node_memory_gib, t.memory_fraction * q.node_memory_gib
    if q.data_gib + q.app_memory_gib > node:
        return (
            f"{t.name} lives in the node's memory: {_gib(q.data_gib)} of data plus "
            f"{_gib(q.app_memory_gib)} for the program is more than the node's {_gib(node)}."
        )
    if q.data_gib > cap:
        return (
            f"{t.name} can hold at most {_gib(cap)} ({t.memory_fraction:.0%} of the node's "
            f"{_gib(node)}), less than the {_gib(q.data_gib)} of data."
        )
    return None


def _memory_fit(t: TargetFacts, q: Question) -> str:
    cap = t.memory_fraction * q.node_memory_gib
    text = (
        f"The data fits in {t.name}: {_gib(q.data_gib)} is within its {_gib(cap)} limit "
        f"({t.memory_fraction:.0%} of the node's {_gib(q.node_memory_gib)})"
    )
    if q.app_memory_gib:
        return f"{text}, and the program's {_gib(q.app_memory_gib)} still fits beside it."
    return f"{text}."


def _judge(
    t: TargetFacts, q: Question, tags: set[_Tag], scale: _Scale, usual: TargetFacts | None
) -> _Verdict:
    v = _Verdict(t)
    light = _Tag.LIGHT in tags

    # 1. What cannot work, or is against the site's rules.
    if q.shared_between_nodes and not t.shared:
        v.stop(_Block.IMPOSSIBLE, f"{t.name} is local to each node: other nodes cannot see it.")
    if t.in_memory:
        problem = _memory_problem(t, q)
        if problem:
            v.stop(_Block.IMPOSSIBLE, problem)
            v.memory_blocked = True
        else:
            v.notes.append(_memory_fit(t, q))
    if t.quota_gib is not None:
        share = q.data_gib / t.quota_gib if t.quota_gib else (math.inf if q.data_gib else 0.0)
        if share > 1:
            v.stop(
                _Block.QUOTA,
                f"{_gib(q.data_gib)} is more than the {_gib(t.quota_gib)} default quota on "
                f"{t.name}; ask the administrators to raise it.",
            )
            # The bigger the increase, the less likely it is granted.
            v.score -= 10 * math.log10(min(share, 1e6))
        elif share > TIGHT_QUOTA:
            v.cautions.append(
                f"The data would fill {share:.0%} of the {_gib(t.quota_gib)} default quota on "
                f"{t.name}, leaving little room for results."
            )
            v.score -= 5
    advised = _advised_against(t, tags)
    if advised:
        v.advised_phrase = advised
        v.stop(_Block.ADVISED, f"The site advises against {t.name} for {advised}.")
        # Heavy I/O on a target meant for light use slows everyone who shares it.
        v.score -= 20 if _Tag.HEAVY in _tags(advised) else 10

    # 2. The site's advice and the nature of the target.
    matched = [(p, _tags(p) & tags) for p in t.use_for]
    matched = [(p, m) for p, m in matched if m]
    if matched:
        v.score += sum(_USE_WEIGHT.get(tag, 0.0) for tag in set().union(*(m for _, m in matched)))
        best_phrase = max(matched, key=lambda pm: max(_USE_WEIGHT.get(x, 0.0) for x in pm[1]))[0]
        v.notes.append(f"The site recommends {t.name} for {best_phrase}.")
    if t.in_memory:
        if _small_io(tags):
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
            v.score -= 30 if light else (10 if _small_io(tags) else 25)
            v.cautions.append(f"{t.name} is emptied when the job ends: copy results elsewhere.")
        else:
            v.score += 5
            v.notes.append(f"{t.name} is cleaned up after the job, fine for data you won't keep.")
    elif not _redundant(t):
        v.score -= 15 if light else 5
        v.cautions.append(f"{t.name} has no redundancy: keep a copy elsewhere.")

    # 3. The figures; for a light job speed hardly matters.
    weight = W_FIGURES / 6 if light else W_FIGURES
    figure = _figure(t, q)
    v.score += weight * scale.position(figure)
    label = _figure_label(q)
    if figure is None:
        v.notes.append(f"No {label} figure for {t.name} yet, so its facts alone rank it.")
    else:
        text = f"Measured {_mib_s(figure)} for {label}"
        if usual is not None and usual is not t:
            base = _figure(usual, q)
            if base and figure / base >= 1.5:
                text += f", {_times(figure / base)} {usual.name}"
        v.notes.append(text + ".")
    return v


# --- the plan -------------------------------------------------------------------


def _plan(verdicts: list[_Verdict], q: Question, keeper: TargetFacts | None) -> str:
    best = verdicts[0]
    t = best.facts
    if best.block is not _Block.NONE:
        return _no_fit_plan(verdicts, q)
    if not t.persistent:
        if not q.must_outlive_job:
            return (
                f"Work in {t.name}: nothing has to outlive the job, so losing it at the end "
                "costs you nothing."
            )
        if keeper is None:
            return (
                f"Work in {t.name}, but first make room for the results: no persistent "
                f"target here can take {_gib(q.data_gib)} within its quota."
            )
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
    if _Tag.LIGHT in _job_tags(q):
        plan = f"Keep these files on {t.name}: the job does little I/O, so speed hardly matters."
    elif q.access is Access.SEQUENTIAL and q.file_shape is FileShape.FEW_LARGE:
        plan = (
            f"Read and write the data directly on {t.name}, in large blocks; staging it "
            "through another target would only add a copy."
        )
    else:
        plan = f"Work on the data directly on {t.name}."
    if not _redundant(t):
        safe = keeper is not None and keeper is not t and _redundant(keeper)
        other = keeper.name if safe and keeper else "a redundant target"
        return f"{plan} It has no redundancy, so keep a copy of what matters on {other}."
    # A target the job would prefer, held back only by its quota, is worth asking for.
    better = next((w for w in verdicts if w.block is _Block.QUOTA and w.score > best.score), None)
    if better and better.facts.quota_gib is not None:
        plan += (
            f" {better.facts.name} would suit it better once its "
            f"{_gib(better.facts.quota_gib)} default quota is raised."
        )
    return plan


def _no_fit_plan(verdicts: list[_Verdict], q: Question) -> str:
    best = verdicts[0]
    t = best.facts
    if best.block is _Block.QUOTA and t.quota_gib is not None:
        plan = (
            f"Nothing fits as it stands: {t.name} suits this job best, but its default quota "
            f"is {_gib(t.quota_gib)}, so ask the administrators to raise it to at least "
            f"{_gib(q.data_gib)}."
        )
    elif best.block is _Block.ADVISED:
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


# --- the answer -----------------------------------------------------------------


def advise(targets: Sequence[TargetFacts], question: Question) -> Advice:
    if not targets:
        return Advice(ranking=(), plan=NO_TARGETS_PLAN)
    tags = _job_tags(question)
    scale = _Scale.of([_figure(t, question) for t in targets])
    keeper = _keeper(targets, question)
    # Figures are compared with the site's usual place for job data, whatever the size.
    usual = _keeper(targets, replace(question, data_gib=0))
    verdicts = [_judge(t, question, tags, scale, usual) for t in targets]
    # Stable: equal scores keep the site's display order.
    verdicts.sort(key=lambda v: (v.block, -v.score))
    return Advice(
        ranking=tuple(v.recommendation() for v in verdicts),
        plan=_plan(verdicts, question, keeper),
    )
