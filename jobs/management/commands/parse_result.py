"""`manage.py parse_result --engine fio|ior|mdtest FILE`: a benchmark's output as
the portal reads it, printed as JSON (null where the benchmark has no figure)."""

import json
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from jobs.engines import ENGINES, ResultParseError, parse_output
from jobs.engines.base import PARSE_MAX_CHARS


class Command(BaseCommand):
    help = "Parses a fio, IOR or mdtest output file and prints the normalized result as JSON."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--engine", required=True, choices=list(ENGINES))
        parser.add_argument("file", help="the benchmark's output (stdout and stderr)")

    def handle(self, *args: Any, engine: str, file: str, **options: Any) -> None:
        try:
            # Undecodable bytes are the parser's to judge, not a reason to give up here;
            # one character past what a parser reads is enough to be refused.
            with Path(file).open(encoding="utf-8", errors="replace") as f:
                output = f.read(PARSE_MAX_CHARS + 1)
        except OSError as e:
            raise CommandError(f"cannot read {file}: {e.strerror or e}") from None
        try:
            result = parse_output(engine, output)
        except ResultParseError as e:
            raise CommandError(f"{file}: {e}") from None
        self.stdout.write(json.dumps(result.summary(), indent=2))

    def execute(self, *args: Any, **options: Any) -> str | None:
        try:
            return super().execute(*args, **options)
        except CommandError as e:
            if not self._called_from_command_line:
                raise  # call_command() callers get the exception
            # One line a script can pass on, instead of Django's "CommandError: ...".
            reason = " ".join(str(e).splitlines())
            sys.stderr.write(f"error: {reason}\n")
            sys.exit(e.returncode)
