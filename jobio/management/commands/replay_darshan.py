"""python manage.py replay_darshan LOG --user NAME [--targets a,b] [--json] [--wait]: a
job's Darshan log read in the sandbox, turned into a replay (jobio/replay.py) and run
on the site's targets as NAME's cluster account, by the same rules as the page's
"Replay on every target" (jobio/replays.py: one going per user, a daily cap, quotas,
slots). With --wait, per target: target, status, seconds, mib_s, ops_s,
job_io_seconds (the job's whole I/O at the measured rate) and scale (the job's I/O per
unit of the replay's). A log it cannot replay is refused in one line."""

import json
import time
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from exercises.catalogue.profiles import profile_for_command
from jobio.models import CheckSource, JobCheck
from jobio.replay import NotReplayable, replay_of
from jobio.replay_figures import Answer, answer
from jobio.replays import ReplayRefused, start_replay
from jobio.sandbox import LogUnreadable, parse_with_site_limits

WAIT_POLL_SECONDS = 2


class Command(BaseCommand):
    help = "Replays a job's Darshan log on the site's storage targets as a user."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("log", type=Path)
        parser.add_argument("--user", required=True, help="the portal login to run it as")
        parser.add_argument("--targets", help="target keys, comma-separated (default: all)")
        parser.add_argument("--json", action="store_true", help="one JSON object")
        parser.add_argument("--wait", action="store_true", help="wait for every target")
        parser.add_argument("--timeout", type=int, default=1800, help="seconds --wait waits")

    def handle(self, *args: object, **options: object) -> None:
        path: Path = options["log"]
        profile = profile_for_command(None)
        user = get_user_model().objects.filter(username=options["user"]).first()
        if user is None:
            raise CommandError(f"{options['user']}: no such portal login")
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        try:
            io = parse_with_site_limits(path)
            replay_of(io)  # refused here, before anything is saved
        except (LogUnreadable, NotReplayable) as e:
            raise CommandError(f"{path}: {e}") from None
        targets = list(profile.targets.order_by("order"))
        if options["targets"]:
            keys = [key.strip() for key in options["targets"].split(",") if key.strip()]
            unknown = sorted(set(keys) - {t.key for t in targets})
            if unknown:
                raise CommandError(f"not a target of {profile.name}: {', '.join(unknown)}")
            targets = [t for t in targets if t.key in keys]
        check = JobCheck.objects.create(
            user=user,
            source=CheckSource.UPLOAD,
            label=f"Command: {path.name}"[:120],
            io=io.to_json(),
        )
        try:
            replay, _ = start_replay(user, check, targets)
        except ReplayRefused as e:
            check.delete()
            raise CommandError(str(e)) from None
        found = answer(replay, profile)
        deadline = time.monotonic() + options["timeout"]
        while options["wait"] and found.going:
            if time.monotonic() > deadline:
                raise CommandError(f"replay {replay.pk}: not done after {options['timeout']} s")
            time.sleep(WAIT_POLL_SECONDS)
            found = answer(replay, profile)
        self._print(replay.pk, found, options["json"])

    def _print(self, replay_id: object, found: Answer, as_json: bool) -> None:
        rows = [
            {
                "target": row.target.key,
                "status": row.run.status,
                "seconds": _rounded(row.seconds, 3),
                "mib_s": _rounded(row.mib_s),
                "ops_s": _rounded(row.ops_s),
                "job_io_seconds": _rounded(row.job_io_seconds, 3),
                "staging_seconds": _rounded(row.staging.seconds if row.staging else None, 3),
                "scale": _rounded(row.scale, 4),
            }
            for row in found.rows
        ]
        if as_json:
            summary = {"replay": str(replay_id), "targets": rows, "verdict": found.verdict}
            self.stdout.write(json.dumps(summary))
            return
        self.stdout.write(f"Replay {replay_id}")
        for row in rows:
            said = ", ".join(f"{k} {v}" for k, v in row.items() if k != "target" and v is not None)
            self.stdout.write(f"{row['target']}: {said}")
        if found.verdict:
            self.stdout.write(found.verdict)


def _rounded(value: float | None, digits: int = 2) -> float | None:
    return None if value is None else round(value, digits)
