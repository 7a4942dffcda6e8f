"""`manage.py attach_result RUN_KEY ...`: a run's output read from its job's output
file, for a run whose post never reached the portal (it was down longer than the
job's retries). Run it where the storage targets are mounted (jobs/recover.py)."""

import uuid
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from jobs.models import BenchmarkRun
from jobs.recover import RecoveryRefused, attach


class Command(BaseCommand):
    help = "Attaches a run's output from its Slurm output file, when the job's post never came."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("keys", nargs="+", metavar="RUN_KEY", help="the run's key (a UUID)")

    def handle(self, *args: Any, keys: list[str], **options: Any) -> None:
        refused = 0
        for key in keys:
            try:
                run = BenchmarkRun.objects.defer("raw_output").get(key=uuid.UUID(key))
                self.stdout.write(attach(run))
            except (ValueError, BenchmarkRun.DoesNotExist):
                self.stderr.write(f"{key}: no such run")
                refused += 1
            except RecoveryRefused as e:
                self.stderr.write(f"{key}: {e}")
                refused += 1
        if refused:
            raise CommandError(f"{refused} of {len(keys)} run(s) got no output")
