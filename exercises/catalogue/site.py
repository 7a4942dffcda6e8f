"""What an exercise's lab page shows every trainee alike: the exercise, its site's
targets and the site's references for it. Kept in each web process, by content.

A class polls its runs panel about 100 times a second, and these rows change when
an administrator edits them or a calibration ends: a few times a term. Each poll's
one state query (exercises/lab/pages.py: panel_state) also hashes these rows (SITE_HASH),
so a process reuses what it loaded for as long as the hash is the same, and loads
again the moment any of the rows differs: never stale, with no invalidation to miss.
"""

import threading
from collections import OrderedDict
from dataclasses import dataclass

from django.db import connection
from django.db.models import F

from exercises.catalogue import findings, lessons
from exercises.catalogue.figures import SiteReferences
from exercises.catalogue.models import (
    Exercise,
    MeasuredReference,
    Metric,
    ReferenceResult,
    StorageTarget,
)
from exercises.catalogue.quiet import QuietSides, quiet_sides

# An SQL expression over `e` (the exercise's row) and `p` (its profile's row): it
# changes whenever any of them, the profile's targets or the exercise's published or
# measured references change. A row's text holds every column.
SITE_HASH = """md5(concat_ws('|', p::text, e::text,
    (SELECT string_agg(t::text, '|' ORDER BY t.id)
       FROM exercises_storagetarget t WHERE t.profile_id = p.id),
    (SELECT string_agg(r::text, '|' ORDER BY r.id)
       FROM exercises_referenceresult r WHERE r.exercise_id = e.id),
    (SELECT string_agg(m::text, '|' ORDER BY m.id)
       FROM exercises_measuredreference m WHERE m.exercise_id = e.id),
    -- The quiet figures of the other exercises its lesson and findings name (Site.quiet):
    -- a calibration updates every row it measured (measured_at), a reload replaces them.
    (SELECT concat_ws(',', count(*), max(m.id), max(m.measured_at), sum(m.median))
       FROM exercises_measuredreference m JOIN exercises_exercise x ON x.id = m.exercise_id
       WHERE x.profile_id = p.id),
    (SELECT concat_ws(',', count(*), max(r.id), sum(r.value))
       FROM exercises_referenceresult r JOIN exercises_exercise x ON x.id = r.exercise_id
       WHERE x.profile_id = p.id)))"""

# An exercise's id and its site's hash; WHERE names the exercise.
_HASH_OF = f"""
    SELECT e.id, {SITE_HASH} FROM exercises_exercise e
    JOIN exercises_siteprofile p ON p.id = e.profile_id
"""  # noqa: S608 (SITE_HASH is a constant)
_HASH_OF_EXERCISE = _HASH_OF + "WHERE e.id = %s"
_HASH_OF_KEY = _HASH_OF + "WHERE p.name = %s AND e.key = %s"

# Sites a process keeps: a site has one profile active; old hashes age out.
KEPT = 32
_kept: OrderedDict[str, "Site"] = OrderedDict()
_keeping = threading.Lock()  # gunicorn's sync workers have one thread; other servers not


@dataclass(frozen=True)
class Site:
    """Shared by the requests of a process: read it, never change it."""

    exercise: Exercise  # its profile with it
    targets: list[StorageTarget]  # the profile's, in their order
    references: SiteReferences  # for the exercise on those targets
    # The site's quiet figures of every side its claims and findings name.
    quiet: QuietSides


def site(exercise_id: int, site_hash: str) -> Site:
    """The exercise's site as `site_hash` (SITE_HASH) names it: kept, or loaded
    (4 queries, and 1 to see that nothing changed meanwhile)."""
    with _keeping:
        if (kept := _kept.get(site_hash)) is not None:
            _kept.move_to_end(site_hash)
            return kept
    loaded = _load(exercise_id)
    with connection.cursor() as cursor:
        cursor.execute(_HASH_OF_EXERCISE, [exercise_id])
        unchanged = cursor.fetchone() == (exercise_id, site_hash)
    if unchanged:  # else an edit came in between: use it, keep it under its own hash
        with _keeping:
            _kept[site_hash] = loaded
            while len(_kept) > KEPT:
                _kept.popitem(last=False)
    return loaded


def site_of_key(profile: str, key: str) -> Site | None:
    """The site of `profile`'s exercise `key` (1 query when kept), or None: for a page
    that needs the exercise and its targets, not the runs panel's whole state."""
    with connection.cursor() as cursor:
        cursor.execute(_HASH_OF_KEY, [profile, key])
        row = cursor.fetchone()
    return site(*row) if row else None


def _load(exercise_id: int) -> Site:
    exercise = Exercise.objects.select_related("profile").get(pk=exercise_id)
    targets = list(exercise.profile.targets.all())
    named = lessons.sides(lessons.claims_of(exercise)) | findings.sides(
        findings.findings_of(exercise)
    )
    # The site's figures of this exercise, and the quiet ones of every exercise its
    # claims and findings name, in the same two queries.
    keys = {exercise.key} | {side.exercise for side in named}
    published = list(
        ReferenceResult.objects.filter(
            exercise__profile_id=exercise.profile_id, exercise__key__in=keys
        ).annotate(exercise_key=F("exercise__key"), target_key=F("target__key"))
    )
    measured = list(
        MeasuredReference.objects.filter(
            exercise__profile_id=exercise.profile_id, exercise__key__in=keys, metric=Metric.WRITE
        ).values_list(
            "exercise_id",
            "target_id",
            "median",
            "low",
            "high",
            "measured_at",
            "calibration_id",
            "exercise__key",
            "target__key",
            "by_size",
            "space",
        )
    )
    references = SiteReferences(
        [r for r in published if r.exercise_id == exercise.pk],
        [row[:7] for row in measured if row[0] == exercise.pk],
    )
    quiet = quiet_sides(
        [
            (r.exercise_key, r.target_key, r.value, r.unit, r.source)
            for r in published
            if r.metric == Metric.WRITE
        ],
        [
            (e, t, median, by_size, space, round_, at)
            for (_, _, median, _, _, at, round_, e, t, by_size, space) in measured
        ],
    )
    return Site(exercise, targets, references, quiet)
