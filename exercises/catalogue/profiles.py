"""Site profiles: which one the site runs (SITE_PROFILE), and loading one from
exercises/catalogue/sites/NAME.toml into the database (again: it updates).

A target may carry a `[targets.quota]` table (collector, filesystem): how its usage is
collected, see quota_sources.py; and a `[targets.purge]` table (days, by, exempt): which
files the site's purge removes, see purges.py.

An exercise may state what one run of it should show, as `claims` (lessons.py), and
what its figures say in words chosen from them, as `findings` (findings.py). Its prose
states no other outcome (outcomes.py): the loader refuses one, naming where.

The [profile] table and the references are checked by the pydantic models below; a
target's and an exercise's fields are their models' (StorageTarget, Exercise), checked
by the models' own validation, so the file has no second schema to keep in step.

Published compression figures of the site's own data, shown beside the compression
exercises' runs, come as [[compression]] tables (algorithm, ratio, compress_mb_s,
decompress_mb_s, source): SiteProfile.compression.

A reference is a figure the site published for an exercise on a target, kept in the
unit it was published in, with where it comes from:

    [[references]]
    exercise = "ior-fpp"
    target = "gpfs-data"
    metric = "write"     # write, read (bandwidth); create, stat, file_read, remove
    value = 14537
    unit = "MB/s"        # MiB/s or MB/s for a bandwidth, ops/s for file operations
    source = "CRI storage talk: IOR POSIX, 16 nodes, 448 cores, 1 file per process"
"""

import math
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError
from django.db import transaction
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from exercises.catalogue import findings, lessons, outcomes
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
from exercises.catalogue.purges import save_purge
from exercises.catalogue.quota_sources import save_quota_source
from portal.errors import NotFound

# Every site profile the portal ships, one TOML file each.
PROFILES = Path(__file__).resolve().parent / "sites"
# The purge's fields come from the target's [targets.purge] table (purges.py).
PURGE_FIELDS = ("purge_days", "purge_by", "purge_exempt")
TARGET_FIELDS = [
    f.name for f in StorageTarget._meta.fields if f.name not in ("id", "profile", *PURGE_FIELDS)
]
EXERCISE_FIELDS = [f.name for f in Exercise._meta.fields if f.name not in ("id", "profile")]
BANDWIDTH_UNITS = (Unit.MIB_S, Unit.MB_S)


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
        raise NotFound(not_loaded())
    return profile


def profile_for_command(name: str | None = None) -> SiteProfile:
    """The site's profile (or `name`), for a command: a CommandError that says what to
    do while it is not loaded."""
    profile = active(name)
    if profile is None:
        raise CommandError(not_loaded(name))
    return profile


class Head(BaseModel):
    """The [profile] table: the site's name and title, its engine, its nodes' memory
    (their values are checked by the model, SiteProfile.full_clean)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    title: str
    description: str = ""
    engine: str = "fio"
    node_memory_gib: int = 64


class Reference(BaseModel):
    """A [[references]] entry as the file gives it: a figure of a metric, in a unit that
    metric comes in, with where it comes from."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    exercise: str
    target: str
    metric: Metric
    value: float
    unit: Unit
    source: str

    @field_validator("value", mode="before")
    @classmethod
    def _a_positive_figure(cls, value: object) -> object:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"value {value!r} is not a number")
        if not (math.isfinite(value) and value > 0):
            raise ValueError(f"value {value} is not a positive figure")
        return value

    @field_validator("source")
    @classmethod
    def _said_where_from(cls, source: str) -> str:
        if not source.strip():
            raise ValueError("say where the figure comes from (talk, year, conditions)")
        return source

    @model_validator(mode="after")
    def _unit_of_its_metric(self) -> "Reference":
        if self.metric in BANDWIDTH_METRICS and self.unit not in BANDWIDTH_UNITS:
            raise ValueError(
                f"a {self.metric} bandwidth is given in MiB/s or MB/s, not {self.unit}"
            )
        if self.metric not in BANDWIDTH_METRICS and self.unit != Unit.OPS_S:
            raise ValueError(f"{self.metric} is counted in ops/s, not {self.unit}")
        return self


def _problems(error: ValidationError) -> str:
    """A table's errors in the words of the profile's author."""
    unknown, missing, said = [], [], []
    for problem in error.errors():
        field = ".".join(str(part) for part in problem["loc"])
        if problem["type"] == "extra_forbidden":
            unknown.append(field)
        elif problem["type"] == "missing":
            missing.append(field)
        elif problem["type"] == "enum":
            choices = ", ".join(Metric.values if field == "metric" else Unit.values)
            said.append(f"{field} {problem['input']!r} is not one of {choices}")
        elif problem["type"] == "value_error":
            said.append(str(problem["ctx"]["error"]))
        else:
            said.append(f"{field}: {problem['msg']}")
    if unknown:
        said.insert(0, f"unknown field(s) {', '.join(sorted(unknown))}")
    if missing:
        said.insert(0, f"missing {', '.join(sorted(missing))}")
    return "; ".join(said)


class Compression(BaseModel):
    """A [[compression]] entry: what an algorithm did to the site's data, published."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    algorithm: str
    ratio: float
    compress_mb_s: float | None = None
    decompress_mb_s: float | None = None
    source: str

    @model_validator(mode="after")
    def _figures(self) -> "Compression":
        if not (math.isfinite(self.ratio) and 1 <= self.ratio <= 1000):
            raise ValueError(f"ratio {self.ratio} is not 1 or more (bytes in per byte stored)")
        for speed in (self.compress_mb_s, self.decompress_mb_s):
            if speed is not None and not (math.isfinite(speed) and speed > 0):
                raise ValueError(f"a speed of {speed} MB/s is no figure")
        if not self.source.strip():
            raise ValueError("say where the figures come from (talk, year, data)")
        return self


def compression(items: Any) -> list[dict[str, Any]]:
    """The [[compression]] tables as SiteProfile.compression keeps them; ValueError
    says which is wrong and why."""
    if not isinstance(items, list):
        raise ValueError("compression: a list of tables ([[compression]])")
    figures = []
    for number, item in enumerate(items, start=1):
        try:
            figures.append(Compression.model_validate(item).model_dump())
        except ValidationError as e:
            raise ValueError(f"compression {number}: {_problems(e)}") from None
    algorithms = [f["algorithm"] for f in figures]
    if len(set(algorithms)) != len(algorithms):
        raise ValueError("compression: an algorithm is given twice; keep one")
    return figures


def held_sentences(data: dict[str, Any]) -> list[str]:
    """The sentences of a profile that figures hold: its claims' texts and its
    findings' (outcomes.py)."""
    held = []
    for exercise in data.get("exercises", []):
        for claim in exercise.get("claims", []) if isinstance(exercise, dict) else []:
            if isinstance(claim, dict) and isinstance(claim.get("text"), str):
                held.append(claim["text"])
        for finding in exercise.get("findings", []) if isinstance(exercise, dict) else []:
            if isinstance(finding, dict):
                held += [finding[w] for w in findings.WAYS if isinstance(finding.get(w), str)]
    return held


def check_outcomes(data: dict[str, Any]) -> None:
    """Refuses a profile whose prose states an outcome no figure holds (outcomes.py),
    naming where and the words."""
    if unheld := outcomes.unheld(data, held_sentences(data)):
        more = f" (and {len(unheld) - 1} more)" if len(unheld) > 1 else ""
        raise ValueError(f"{unheld[0]}{more}")


@transaction.atomic
def load(data: dict[str, Any]) -> SiteProfile:
    check_outcomes(data)
    try:
        head = Head.model_validate(data["profile"])
    except ValidationError as e:
        raise ValueError(f"[profile]: {_problems(e)}") from None
    profile, _ = SiteProfile.objects.update_or_create(
        name=head.name, defaults=head.model_dump(exclude={"name"}, exclude_unset=True)
    )
    profile.full_clean()  # e.g. an engine not in jobs.engines.ENGINES
    for order, item in enumerate(data.get("targets", [])):
        quota = item.pop("quota", None)
        purge = item.pop("purge", None)
        target, _ = StorageTarget.objects.update_or_create(
            profile=profile,
            key=item["key"],
            defaults={"order": order, **_pick(item, TARGET_FIELDS, "target")},
        )
        target.full_clean()
        save_quota_source(target, quota)
        save_purge(target, purge)
    claims: dict[str, list] = {}
    found: dict[str, list] = {}
    for order, item in enumerate(data.get("exercises", [])):
        before = profile.exercises.filter(key=item["key"]).first()
        # Claims and findings name other exercises, perhaps later ones: set once all are in.
        claims[item["key"]] = item.pop("claims", [])
        found[item["key"]] = item.pop("findings", [])
        exercise, _ = Exercise.objects.update_or_create(
            profile=profile,
            key=item["key"],
            defaults={
                "order": order,
                "claims": [],
                "findings": [],
                **_pick(item, EXERCISE_FIELDS, "exercise"),
            },
        )
        exercise.full_clean()
        if before is not None and _measures_differently(before, exercise):
            # The site's measured figures were of the old workload: shown beside the new
            # one's runs they would teach the wrong thing. The next calibration (the
            # demo's first start, --if-unmeasured) measures it again.
            MeasuredReference.objects.filter(exercise=exercise).delete()
    exercise_keys = set(profile.exercises.values_list("key", flat=True))
    target_keys = set(profile.targets.values_list("key", flat=True))
    sweeps = dict(profile.exercises.values_list("key", "block_sizes"))
    for key, raw in claims.items():
        lessons.parse(raw, key, exercise_keys, target_keys, sweeps)
        findings.parse(found[key], key, exercise_keys, target_keys, sweeps)
        profile.exercises.filter(key=key).update(claims=raw, findings=found[key])
    profile.compression = compression(data.get("compression", []))
    profile.save(update_fields=["compression"])
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


def _pick(item: dict[str, Any], fields: list[str], skip: str) -> dict[str, Any]:
    unknown = set(item) - set(fields)
    if unknown:
        names = ", ".join(sorted(unknown))
        raise ValueError(f"{skip} {item.get('key')!r}: unknown field(s) {names}")
    return {k: v for k, v in item.items() if k != "key"}


def _measures_differently(before: Exercise, after: Exercise) -> bool:
    def what(e: Exercise) -> tuple:
        return e.workload, e.runs_with, e.spread

    return what(before) != what(after)


def _reference(profile: SiteProfile, item: dict[str, Any], which: str) -> ReferenceResult:
    """A [[references]] entry checked as a Reference, then against the profile: an
    exercise and a target it has, a metric the exercise measures. Raises ValueError
    saying what to fix."""
    try:
        given = Reference.model_validate(item)
    except ValidationError as e:
        raise ValueError(f"{which}: {_problems(e)}") from None
    exercise = profile.exercises.filter(key=given.exercise).first()
    if exercise is None:
        known = ", ".join(profile.exercises.values_list("key", flat=True))
        raise ValueError(
            f"{which}: no exercise {given.exercise!r} in this profile (its exercises: {known})"
        )
    target = profile.targets.filter(key=given.target).first()
    if target is None:
        known = ", ".join(profile.targets.values_list("key", flat=True))
        raise ValueError(
            f"{which}: no target {given.target!r} in this profile (its targets: {known})"
        )
    # A figure the exercise's runs never produce would never be compared with anything.
    bandwidth = given.metric in BANDWIDTH_METRICS
    if bandwidth == exercise.measures_metadata:
        measured = "file operations per second" if bandwidth else "bandwidth"
        raise ValueError(
            f"{which}: exercise {exercise.key} measures {measured}, not {given.metric}"
        )
    if given.metric == Metric.READ and not exercise.read_back:
        raise ValueError(f"{which}: exercise {exercise.key} does not read its data back")
    reference = ReferenceResult(
        exercise=exercise,
        target=target,
        metric=given.metric,
        value=given.value,
        unit=given.unit,
        source=given.source,
    )
    reference.full_clean(validate_constraints=False)  # e.g. a source over 200 characters
    return reference
