"""Imports Open OnDemand quota files (version 1) into the quota figures."""

from django.core.management.base import BaseCommand, CommandError, CommandParser

from exercises.catalogue.profiles import profile_for_command
from exercises.quotas.ondemand import OnDemandFileError, import_files, read


class Command(BaseCommand):
    help = "Import Open OnDemand quota JSON files (the format of OOD_QUOTA_PATH)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("files", nargs="+", help="quota JSON files")

    def handle(self, *args: object, files: list[str], **options: object) -> None:
        profile = profile_for_command()
        for path in files:  # a file that cannot be used stops the import before it starts
            try:
                read(path)
            except OnDemandFileError as e:
                raise CommandError(str(e)) from None
        result = import_files(files, profile)
        for note in result.notes:
            self.stderr.write(note)
        older = f", {result.older} older than what is stored (kept)" if result.older else ""
        self.stdout.write(f"{result.stored} quota figure(s) imported{older}")
