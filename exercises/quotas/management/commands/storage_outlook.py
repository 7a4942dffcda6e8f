"""python manage.py storage_outlook --user NAME [--json]: what My storage says of one
user, per target: the space and files used against the limit where trouble starts,
and when each fills at the recent pace (exercises/quotas/forecast.py), or why no
forecast is given. For support staff answering "when will I hit my quota?"."""

import json

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from exercises.catalogue.profiles import profile_for_command
from exercises.quotas import status
from portal.models import ClusterAccount


class Command(BaseCommand):
    help = "Prints a user's usage on every target and when each fills at the recent pace."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", required=True, help="the portal login")
        parser.add_argument("--json", action="store_true", help="one JSON object")

    def handle(self, *args: object, **options: object) -> None:
        profile = profile_for_command()
        user = get_user_model().objects.filter(username=options["user"]).first()
        if user is None:
            raise CommandError(f"{options['user']}: no such portal login")
        account = ClusterAccount.objects.filter(user=user).first()
        if account is None:
            raise CommandError(f"{user.username} has no cluster account: no storage to tell")
        rows = [_outlook(row) for row in status.for_account(profile, account)]
        if options["json"]:
            self.stdout.write(json.dumps({"user": user.username, "targets": rows}))
            return
        for row in rows:
            said = row["says"] or "usage unknown"
            self.stdout.write(f"{row['target']}: {said}")


def _outlook(row: status.TargetStorage) -> dict:
    """One target as the command prints it: figures, and per meter its forecast."""
    found: dict = {
        "target": row.target.key,
        "used_bytes": row.quota.bytes_used if row.known else None,
        "quota_bytes": None,
        "files_used": row.quota.files_used if row.known else None,
        "files_quota": None,
        "days_to_full": None,
        "files_days_to_full": None,
        "why": ""
        if row.known
        else "usage unknown: " + (row.quota.error if row.quota else "never collected"),
        "says": " ".join(said for _, _, said in row.forecasts),
    }
    for meter, fc, _ in row.forecasts:
        prefix = "" if meter.what == "Space" else "files_"
        found["quota_bytes" if not prefix else "files_quota"] = meter.limit
        found[f"{prefix}days_to_full"] = None if fc.days is None else round(fc.days, 1)
        if fc.days is None and not prefix:
            found["why"] = fc.why
    return found
