"""python manage.py storage_outlook --user NAME [--json] [--scan]: what My storage says
of one user, per target: the space and files used against the limit where trouble
starts, when each fills at the recent pace (exercises/quotas/forecast.py) or why no
forecast is given, what the purge takes (now, within 1, 3 and 7 days, with up to 20
paths) and the largest directories, from the user's latest storage scan. --scan runs a
scan first, as the user through Slurm, and waits for it (scans.py). For support staff
answering "when will I hit my quota?" and "what will the purge take?"."""

import json
import time

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from exercises.catalogue.profiles import profile_for_command
from exercises.quotas import scan_pages, scans, status
from exercises.quotas.models import StorageScan
from portal.models import ClusterAccount


class Command(BaseCommand):
    help = "Prints a user's usage on every target and when each fills at the recent pace."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", required=True, help="the portal login")
        parser.add_argument("--json", action="store_true", help="one JSON object")
        parser.add_argument(
            "--scan", action="store_true", help="scan the user's storage first, and wait for it"
        )
        parser.add_argument(
            "--timeout", type=float, default=600, help="seconds to wait for the scan (600)"
        )

    def handle(self, *args: object, **options: object) -> None:
        profile = profile_for_command()
        user = get_user_model().objects.filter(username=options["user"]).first()
        if user is None:
            raise CommandError(f"{options['user']}: no such portal login")
        account = ClusterAccount.objects.filter(user=user).first()
        if account is None:
            raise CommandError(f"{user.username} has no cluster account: no storage to tell")
        targets = list(profile.targets.all())
        if options["scan"]:
            self._scan(account, targets, options["timeout"])
        scan = scan_pages.state_of(account, targets)
        rows = [_outlook(row, scan) for row in status.for_account(profile, account)]
        if options["json"]:
            scanned = scan.latest.ended_at.isoformat() if scan.latest else None
            self.stdout.write(
                json.dumps({"user": user.username, "scanned_at": scanned, "targets": rows})
            )
            return
        for row in rows:
            said = row["says"] or "usage unknown"
            self.stdout.write(f"{row['target']}: {said} {row['purge_says']}".rstrip())

    def _scan(self, account: ClusterAccount, targets: list, timeout: float) -> None:
        scan = scans.start(account, targets, again=True)
        deadline = time.monotonic() + timeout
        while scan.status == StorageScan.Status.SUBMITTED:
            if time.monotonic() > deadline:
                raise CommandError(f"the scan gave no answer within {timeout:g} s; it goes on")
            time.sleep(1)
            scan.refresh_from_db()
            scans.follow(scan)
        if scan.status == StorageScan.Status.FAILED:
            raise CommandError(f"the scan failed: {scan.error}")


def _outlook(row: status.TargetStorage, scan: scan_pages.ScanState) -> dict:
    """One target as the command prints it: figures, per meter its forecast, and what
    the latest scan found (null where it did not reach the target)."""
    scanned = scan.of(row.target)
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
        "purge_due": scan_pages.purge_due(scanned) if scanned else None,
        "purge_says": scanned.due_sentence if scanned else "",
        "largest_dirs": scan_pages.largest_dirs(scanned) if scanned else None,
        "scan_note": scanned.note if scanned else "",
    }
    for meter, fc, _ in row.forecasts:
        prefix = "" if meter.what == "Space" else "files_"
        found["quota_bytes" if not prefix else "files_quota"] = meter.limit
        found[f"{prefix}days_to_full"] = None if fc.days is None else round(fc.days, 1)
        if fc.days is None and not prefix:
            found["why"] = fc.why
    return found
