"""Writes the current quota figures as an Open OnDemand quota file or Open XDMoD storage
input."""

import json
import os
import tempfile
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from exercises.catalogue.profiles import profile_for_command
from exercises.quotas import ondemand, xdmod


class Command(BaseCommand):
    help = "Export the current quota figures for Open OnDemand or Open XDMoD."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--format", required=True, choices=["ondemand", "xdmod"])
        parser.add_argument("--output", default="-", help="a file (default: standard output)")

    def handle(self, *args: object, format: str, output: str, **options: object) -> None:
        profile = profile_for_command()
        data = ondemand.export(profile) if format == "ondemand" else xdmod.export(profile)
        text = json.dumps(data, indent=2) + "\n"
        if output == "-":
            self.stdout.write(text, ending="")
            return
        target = Path(output)
        # Written beside the file, then renamed: a reader (OnDemand's dashboard, XDMoD's
        # ETL) never sees half a file.
        tmp = None
        try:
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
            with os.fdopen(fd, "w") as f:
                f.write(text)
            os.chmod(tmp, 0o644)
            os.replace(tmp, target)
        except OSError as e:
            if tmp and os.path.exists(tmp):
                os.unlink(tmp)
            raise CommandError(f"cannot write {output}: {e.strerror}") from None
        self.stderr.write(f"{output}: {len(data if format == 'xdmod' else data['quotas'])} rows")
