"""Site profiles: which one the site runs (SITE_PROFILE), and loading one from
exercises/catalogue/sites/NAME.toml into the database (again: it updates).

A target may carry a `[targets.quota]` table (collector, filesystem): how its usage is
collected, see quota_sources.py.

An exercise may state what one run of it should show, as `claims` (lessons.py).

A reference is a figure the site published for an exercise on a target, kept in the
unit it was published in, with where it comes from:

    [[references]]
    exercise = "ior-fpp"
    target = "gpfs-data"
    metric = "write"     # write, read (bandwidth); create, stat, file_read, remove
    value = 14537
    unit = "MB/s"        # MiB/s or MB/s for a bandwidth, ops/s for file operations
    source = "CRI storage talk: IOR POSIX, 16 nodes, 448 cores, 1 file per process
"""

import math
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError
from django.db import transaction
from django.http import Http404

from exercises.catalogue import lessons
from exercises.catalogue.models import (
    BANDWIDTH_METRICS,
    Exercise,
    MeasuredReference,
    Metric,
    ReferenceResult,
    SiteProfile,
    StorageTarget,
    Unit,
)
from exercises.catalogue.quota_sources import save_quota_source

# Every site profile the portal ships, one TOML file each.
PROFILES = Path(__file__).resolve().parent / "sites"
TARGET_FIELDS = [f.name for f in StorageTarget._meta.fields if f.name not in ("id", "profile")]
EXERCISE_FIELDS = [f.name for f in Exercise._meta.fields if f.name not in ("id", "profile")]
REFERENCE_FIELDS = {"exercise", "target", "metric", "value", "unit", "source"}
BANDWIDTH_UNITS = (Unit.MIB_S, Unit.MB_S)


def _measures_differently(before: Exercise, after: Exercise) -> bool:
    return (before.workload, before.runs_with) != (after.workload, after.runs_with)


def _pick(item: dict[str, Any], fields: list[str], skip: str) -> dict[str, Any]:
    unknown = set(item) - set(fields)
    if unknown:
        names = ", ".join(sorted(unknown))
        raise ValueError(f"{skip} {item.get('key')!r}: unknown field(s) {names}")
    return {k: v for k, v in item.items() if k != "key"}


@transaction.atomic
def load(data: dict[str, Any]) -> SiteProfile:
    head = data["profile"]
    profile, _ = SiteProfile.objects.update_or_create(
        name=head["name"], defaults={k: v for k, v in head.items() if k != "name"}
    )
    profile.full_clean()  # e.g. an engine not in jobs.engines.ENGINES
    for order, item in enumerate(data.get("targets", [])):
        quota = item.pop("quota", None)
        target, _ = StorageTarget.objects.update_or_create(
            profile=profile,
            key=item["key"],
            defaults={"order": order, **_pick(item, TARGET_FIELDS, "target")},
        )
        target.full_clean()
        save_quota_source(target, quota)
    claims: dict[str, list] = {}
    for order, item in enumerate(data.get("exercises", [])):
        before = profile.exercises.filter(key=item["key"]).first()
        # Claims name other exercises, perhaps later ones: set once all are in.
        claims[item["key"]] = item.pop("claims", [])
        exercise, _ = Exercise.objects.update_or_create(
            profile=profile,
            key=item["key"],
            defaults={"order": order, "claims": [], **_pick(item, EXERCISE_FIELDS, "exercise")},
        )
        exercise.full_clean()
        if before is not None and _measures_differently(before, exercise):
            # The site's measured figures were of the old workload: shown beside the new
            # one's runs they would teach the wrong thing. The next calibration (the
            # demo's first start, --if-unmeasured) measures it again.
            MeasuredReference.objects.filter(exercise=exercise).delete()
    exercise_keys = set(profile.exercises.values_list("key", flat=True))
    target_keys = set(profile.targets.values_list("key", flat=True))
    for key, raw in claims.items():
        lessons.parse(raw, key, exercise_keys, target_keys)
        profile.exercises.filter(key=key).update(claims=raw)
    seen: set[tuple[str, str, str]] = set()
    for number, item in enumerate(data.get("references", []), start=1):
        reference = _reference(profile, item, f"reference {number}")
        key = (reference.exercise.key, reference.target.key, reference.metric)
        if key in seen:
            raise ValueError(
                f"reference {number}: {key[2]} of {key[0]} on {key[1]} is given twice; keep one"
            )
        seen.add(key)
        ReferenceResult.objects.update_or_create(
            exercise=reference.exercise,
            target=reference.target,
            metric=reference.metric,
            defaults={k: getattr(reference, k) for k in ("value", "unit", "source")},
        )
    return profile


def _reference(profile: SiteProfile, item: dict[str, Any], which: str) -> ReferenceResult:
    """A [[references]] entry checked against the profile: a figure of a metric the
    exercise measures, in a unit that metric comes in, with its source. Raises
    ValueError saying what to fix."""
    unknown = set(item) - REFERENCE_FIELDS
    if unknown:
        raise ValueError(f"{which}: unknown field(s) {', '.join(sorted(unknown))}")
    missing = sorted(REFERENCE_FIELDS - set(item))
    if missing:
        raise ValueError(f"{which}: missing {', '.join(missing)}")
    exercise = profile.exercises.filter(key=item["exercise"]).first()
    if exercise is None:
        known = ", ".join(profile.exercises.values_list("key", flat=True))
        raise ValueError(
            f"{which}: no exercise {item['exercise']!r} in this profile (its exercises: {known})"
        )
    target = profile.targets.filter(key=item["target"]).first()
    if target is None:
        known = ", ".join(profile.targets.values_list("key", flat=True))
        raise ValueError(
            f"{which}: no target {item['target']!r} in this profile (its targets: {known})"
        )
    metric, unit, value = item["metric"], item["unit"], item["value"]
    if metric not in Metric.values:
        raise ValueError(f"{which}: metric {metric!r} is not one of {', '.join(Metric.values)}")
    if unit not in Unit.values:
        raise ValueError(f"{which}: unit {unit!r} is not one of {', '.join(Unit.values)}")
    bandwidth = metric in BANDWIDTH_METRICS
    if bandwidth and unit not in BANDWIDTH_UNITS:
        raise ValueError(f"{which}: a {metric} bandwidth is given in MiB/s or MB/s, not {unit}")
    if not bandwidth and unit != Unit.OPS_S:
        raise ValueError(f"{which}: {metric} is counted in ops/s, not {unit}")
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{which}: value {value!r} is not a number")
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{which}: value {value} is not a positive figure")
    if not str(item["source"]).strip():
        raise ValueError(f"{which}: say where the figure comes from (talk, year, conditions)")
    # A figure the exercise's runs never produce would never be compared with anything.
    if bandwidth == exercise.measures_metadata:
        measured = "file operations per second" if bandwidth else "bandwidth"
        raise ValueError(f"{which}: exercise {exercise.key} measures {measured}, not {metric}")
    if metric == Metric.READ and not exercise.read_back:
        raise ValueError(f"{which}: exercise {exercise.key} does not read its data back")
    reference = ReferenceResult(
        exercise=exercise,
        target=target,
        metric=metric,
        value=value,
        unit=unit,
        source=item["source"],
    )
    reference.full_clean(validate_constraints=False)  # e.g. a source over 200 characters
    return reference


def active(name: str | None = None) -> SiteProfile | None:
    """The site's profile (SITE_PROFILE), or the profile `name`; None while it is not
    loaded (1 query). Every page, command and task finds the site's profile here."""
    return SiteProfile.objects.filter(name=name or settings.SITE_PROFILE).first()


def not_loaded(name: str | None = None) -> str:
    """What to do while a profile is not loaded."""
    name = name or settings.SITE_PROFILE
    return (
        f"The site profile {name!r} is not loaded. An administrator runs: "
        f"python manage.py load_site_profile {name}"
    )


def active_profile() -> SiteProfile:
    """The site's profile, for a page: a 404 that says what to do while it is not loaded."""
    profile = active()
    if profile is None:
        raise Http404(not_loaded())
    return profile


def profile_for_command(name: str | None = None) -> SiteProfile:
    """The site's profile (or `name`), for a command: a CommandError that says what to
    do while it is not loaded."""
    profile = active(name)
    if profile is None:
        raise CommandError(not_loaded(name))
    return profile
