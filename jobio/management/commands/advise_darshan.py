"""python manage.py advise_darshan FILE [--profile NAME] [--json]: a job's Darshan log
read (in the same sandbox as the portal's uploads) and advised on, for the active site
profile or the one named."""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from exercises.advisor.facts import advice_for
from exercises.catalogue.profiles import profile_for_command
from jobio.sandbox import LogUnreadable, parse_with_site_limits


class Command(BaseCommand):
    help = "Reads a Darshan log and says which storage target the job belongs on."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path)
        parser.add_argument("--profile", help="a loaded site profile (default: SITE_PROFILE)")
        parser.add_argument("--json", action="store_true", help="one JSON object")

    def handle(self, *args: object, **options: object) -> None:
        path: Path = options["file"]
        profile = profile_for_command(options["profile"])
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        try:
            io = parse_with_site_limits(path)
        except LogUnreadable as e:
            raise CommandError(f"{path}: {e}") from None
        job = advice_for(io, profile)
        summary = {
            "job_id": io.job_id,
            "uid": io.uid,
            "processes": io.nprocs,
            "pattern": job.pattern.value,
            "files": io.files,
            "shared_files": io.shared_files,
            "bytes_written": io.bytes_written,
            "bytes_read": io.bytes_read,
            "typical_request_bytes": io.typical_request_bytes,
            "sequential_share": round(io.sequential_share, 3),
            "consecutive_share": round(io.consecutive_share, 3),
            "metadata_time_share": round(io.meta_share, 3),
            "io_time_share": None if io.io_time_share is None else round(io.io_time_share, 3),
            # Darshan ran out of room for records: every count is a lower bound.
            "partial": io.partial,
            "resembles": job.resembles.key if job.resembles else None,
            "likeness": job.likeness,
            "ranking": job.ranking,
            "plan": job.advice.plan,
            "speedup": job.speedup.text if job.speedup else None,
            # Interleaved pieces of a shared file: collective I/O, with the site's figures.
            "collective": job.collective or None,
            # One large shared file: striping, how, with the site's figures.
            "striping": job.striping or None,
        }
        if options["json"]:
            self.stdout.write(json.dumps(summary))
            return
        self.stdout.write(f"Job {io.job_id}: {job.pattern.value} I/O, {job.likeness}")
        if io.partial:
            self.stdout.write(
                "This log is partial: Darshan ran out of room for records, so the job "
                "opened more files than it holds and every figure is a lower bound."
            )
        for rank, rec in enumerate(job.advice.ranking, 1):
            fits = "" if rec.fits else " (not as it stands)"
            self.stdout.write(f"{rank}. {rec.target_name}{fits}")
        self.stdout.write(job.advice.plan)
        if job.speedup:
            self.stdout.write(job.speedup.text)
        if job.collective:
            self.stdout.write(job.collective)
        if job.striping:
            self.stdout.write(job.striping)
