"""How the advisor reads: the site's use_for/avoid_for phrases by keyword, a job as
the same tags, a target's redundancy and whether results survive there, and how it
says sizes, speeds and times."""

from enum import StrEnum

from exercises.advisor.question import Access, FileShape, Question, TargetFacts
from jobs.figures import shown
from portal.units import GiB, iec, spoken_seconds

# A job this small (a few config files, a small input) does too little I/O for the
# choice of filesystem to matter: the site's "non-I/O-intensive" advice applies.
LIGHT_GIB = 1.0
LIGHT_FILES = 100
# ... and spends at most this share of its run time in I/O, where a log says.
LIGHT_IO_SHARE = 0.1
# A light job whose I/O takes at most this long on a target may keep its files where
# the site keeps light work ($HOME), though another target is faster: the plan then
# says both times. 1 GiB at $HOME's 20 MiB/s (51 s) is no such job.
TRIFLING_SECONDS = 5.0


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
    ("no backup", Tag.UNPROTECTED),
    ("not backed up", Tag.UNPROTECTED),
    ("results", Tag.RESULTS),
    # In avoid_for: what is kept here goes ("data to keep longer than the purge allows").
    ("purge", Tag.RESULTS),
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


def protects(redundancy: str) -> bool:
    """Whether a profile's redundancy text keeps data through a hardware failure:
    "none: a single virtual disk" and "no backup" do not. A site that says nothing is
    taken at its word elsewhere (an avoid_for phrase), as before it said anything."""
    words = redundancy.strip().lower().split(maxsplit=1)
    return not words or words[0].strip(":,;.") not in {"none", "no"}


def redundant(t: TargetFacts) -> bool:
    """The one rule: its redundancy text (TargetFacts.redundant, from protects) and
    its avoid_for phrases ("the only copy of data")."""
    return t.redundant and not any(Tag.UNPROTECTED in phrase_tags(p) for p in t.avoid_for)


def keeps_results(t: TargetFacts) -> bool:
    """Whether what a job leaves here is still there later: a persistent target that
    nothing purges and that the site does not advise against for results ("the only
    copy of results you need", "results you need to keep: the volume is made afresh")."""
    return t.persistent and not t.purge and advised_against(t, {Tag.RESULTS}) is None


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


def size(data_gib: float) -> str:
    """The job's data as ls -lh says it: '1 GiB', '10.2 MiB', '2 TiB'."""
    return iec(data_gib * GiB)


def duration(seconds: float) -> str:
    """A time as people read it in a sentence: 'under a second', 'about 51 s',
    'about 4 min'."""
    return "under a second" if seconds < 1 else f"about {spoken_seconds(seconds)}"


def took(seconds: float) -> str:
    """A time beside its figure: '28 ms', '5.2 s', '51 s' (portal/units.py)."""
    return "under 1 ms" if seconds < 0.001 else spoken_seconds(seconds)
