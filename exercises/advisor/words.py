"""How the advisor reads: the site's use_for/avoid_for phrases by keyword, a job as
the same tags, and how it says sizes and speeds."""

from enum import StrEnum

from exercises.advisor.question import Access, FileShape, Question, TargetFacts
from jobs.figures import shown

# A job this small (a few config files, a small input) does too little I/O for the
# choice of filesystem to matter: the site's "non-I/O-intensive" advice applies.
LIGHT_GIB = 1.0
LIGHT_FILES = 100
# ... and spends at most this share of its run time in I/O, where a log says.
LIGHT_IO_SHARE = 0.1


class Tag(StrEnum):
    LIGHT = "light"
    HEAVY = "heavy"
    RANDOM = "random"
    SMALL_FILES = "small files"
    SEQUENTIAL = "sequential"
    UNPROTECTED = "unprotected"
    RESULTS = "results"


# Lower-case keywords of use_for/avoid_for phrases. "non-I/O-intensive" contains
# "i/o-intensive", so LIGHT wins over HEAVY (see phrase_tags).
KEYWORDS: tuple[tuple[str, Tag], ...] = (
    ("non-i/o", Tag.LIGHT),
    ("non i/o", Tag.LIGHT),
    ("little i/o", Tag.LIGHT),
    ("scripts", Tag.LIGHT),
    ("configuration", Tag.LIGHT),
    ("source code", Tag.LIGHT),
    ("i/o-intensive", Tag.HEAVY),
    ("i/o intensive", Tag.HEAVY),
    ("random", Tag.RANDOM),
    ("small files", Tag.SMALL_FILES),
    ("sequential", Tag.SEQUENTIAL),
    ("large files", Tag.SEQUENTIAL),
    ("huge files", Tag.SEQUENTIAL),
    ("streaming", Tag.SEQUENTIAL),
    ("only copy", Tag.UNPROTECTED),
    ("no redundancy", Tag.UNPROTECTED),
    ("results", Tag.RESULTS),
)
# How much a use_for phrase of each kind counts when it matches the job.
USE_WEIGHT = {
    Tag.LIGHT: 30.0,
    Tag.RANDOM: 20.0,
    Tag.SMALL_FILES: 20.0,
    Tag.SEQUENTIAL: 20.0,
    Tag.HEAVY: 8.0,
}


def phrase_tags(phrase: str) -> set[Tag]:
    text = phrase.lower().replace("io-intensive", "i/o-intensive")
    tags = {tag for word, tag in KEYWORDS if word in text}
    if Tag.LIGHT in tags:
        tags.discard(Tag.HEAVY)
    return tags


def is_light(q: Question) -> bool:
    return (
        q.access is Access.SEQUENTIAL
        and q.file_shape is FileShape.FEW_LARGE
        and q.data_gib <= LIGHT_GIB
        and (q.file_count or 0) <= LIGHT_FILES
        and (q.io_time_share is None or q.io_time_share <= LIGHT_IO_SHARE)
    )


def job_tags(q: Question) -> set[Tag]:
    tags = {Tag.LIGHT if is_light(q) else Tag.HEAVY}
    if q.access in (Access.RANDOM, Access.MIXED):
        tags.add(Tag.RANDOM)
    if q.file_shape is FileShape.MANY_SMALL:
        tags.add(Tag.SMALL_FILES)
    elif q.access in (Access.SEQUENTIAL, Access.MIXED):
        tags.add(Tag.SEQUENTIAL)
    return tags


def small_io(tags: set[Tag]) -> bool:
    return bool(tags & {Tag.RANDOM, Tag.SMALL_FILES})


def redundant(t: TargetFacts) -> bool:
    return t.redundant and not any(Tag.UNPROTECTED in phrase_tags(p) for p in t.avoid_for)


def over_quota(t: TargetFacts, q: Question) -> bool:
    return t.quota_gib is not None and q.data_gib > t.quota_gib


def advised_against(t: TargetFacts, tags: set[Tag]) -> str | None:
    """The site's avoid_for phrase that matches this job, if any."""
    return next((p for p in t.avoid_for if phrase_tags(p) & tags), None)


def gib(x: float) -> str:
    return f"{x:,.0f} GiB" if x >= 10 or x == int(x) else f"{x:.2g} GiB"


def speed(mib_s: float) -> str:
    """'9,029.5 MiB/s': as every page of the portal writes a figure (jobs/figures.py)."""
    return f"{shown(mib_s)} MiB/s"
