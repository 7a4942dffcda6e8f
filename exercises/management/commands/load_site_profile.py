"""Loads exercises/profiles/NAME.toml into the database (again: it updates).

A target may carry a `[targets.quota]` table (collector, filesystem): how its usage is
collected, see exercises/quota/sources.py."""

import tomllib
from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from exercises.models import Exercise, ReferenceResult, SiteProfile, StorageTarget
from exercises.quota.sources import save_quota_source

PROFILES = Path(__file__).resolve().parents[2] / "profiles"
TARGET_FIELDS = [f.name for f in StorageTarget._meta.fields if f.name not in ("id", "profile")]
EXERCISE_FIELDS = [f.name for f in Exercise._meta.fields if f.name not in ("id", "profile")]


class Command(BaseCommand):
    help = "Load (or update) a site profile: its storage targets, exercises and references."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="a file name in exercises/profiles/, without .toml")

    def handle(self, *args: object, name: str, **options: object) -> None:
        path = PROFILES / f"{name}.toml"
        if not name.replace("-", "").replace("_", "").isalnum() or not path.is_file():
            known = ", ".join(sorted(p.stem for p in PROFILES.glob("*.toml")))
            raise CommandError(f"no site profile {name!r} (known: {known})")
        try:
            data = tomllib.loads(path.read_text())
            profile = load(data)
        except (tomllib.TOMLDecodeError, KeyError, TypeError, ValueError, ValidationError) as e:
            raise CommandError(f"{path.name}: {e}") from None
        self.stdout.write(
            f"site profile {profile.name}: {profile.targets.count()} targets, "
            f"{profile.exercises.count()} exercises, "
            f"{ReferenceResult.objects.filter(exercise__profile=profile).count()} references"
        )


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
    for order, item in enumerate(data.get("exercises", [])):
        exercise, _ = Exercise.objects.update_or_create(
            profile=profile,
            key=item["key"],
            defaults={"order": order, **_pick(item, EXERCISE_FIELDS, "exercise")},
        )
        exercise.full_clean()
    for item in data.get("references", []):
        ReferenceResult.objects.update_or_create(
            exercise=profile.exercises.get(key=item["exercise"]),
            target=profile.targets.get(key=item["target"]),
            metric="write",
            defaults={
                "value": item["write_mib_s"],
                "unit": "MiB/s",
                "source": item.get("source", ""),
            },
        )
    return profile
