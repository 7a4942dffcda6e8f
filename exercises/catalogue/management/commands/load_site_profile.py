"""`manage.py load_site_profile NAME`: loads exercises/catalogue/sites/NAME.toml (the
loader and the format: exercises/catalogue/profiles.py)."""

import tomllib

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from exercises.catalogue import profiles
from exercises.catalogue.models import ReferenceResult


class Command(BaseCommand):
    help = "Load (or update) a site profile: its storage targets, exercises and references."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="a file name in exercises/catalogue/sites/, without .toml")

    def handle(self, *args: object, name: str, **options: object) -> None:
        path = profiles.PROFILES / f"{name}.toml"
        if not name.replace("-", "").replace("_", "").isalnum() or not path.is_file():
            known = ", ".join(sorted(p.stem for p in profiles.PROFILES.glob("*.toml")))
            raise CommandError(f"no site profile {name!r} (known: {known})")
        try:
            data = tomllib.loads(path.read_text())
            profile = profiles.load(data)
        except (tomllib.TOMLDecodeError, KeyError, TypeError, ValueError, ValidationError) as e:
            raise CommandError(f"{path.name}: {e}") from None
        self.stdout.write(
            f"site profile {profile.name}: {profile.targets.count()} targets, "
            f"{profile.exercises.count()} exercises, "
            f"{ReferenceResult.objects.filter(exercise__profile=profile).count()} references"
        )
