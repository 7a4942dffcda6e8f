"""Collects quota figures now (what the collect_quotas task does every
QUOTA_INTERVAL_SECONDS), optionally for some cluster accounts or one target."""

from django.core.management.base import BaseCommand, CommandError, CommandParser

from exercises.catalogue.profiles import profile_for_command
from exercises.quotas.collectors import collect_all
from exercises.quotas.models import Quota
from portal.models import ClusterAccount
from portal.units import iec


class Command(BaseCommand):
    help = "Collect every account's usage on every target that has a quota source, now."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("accounts", nargs="*", help="cluster account names (default: all)")
        parser.add_argument("--target", default="", help="only this target (its key)")

    def handle(self, *args: object, accounts: list[str], target: str, **options: object) -> None:
        profile = profile_for_command()
        if target and not profile.targets.filter(key=target).exists():
            raise CommandError(f"no target {target!r} in the site profile {profile.name}")
        chosen = None
        if accounts:
            chosen = list(ClusterAccount.objects.filter(username__in=accounts))
            missing = set(accounts) - {a.username for a in chosen}
            if missing:
                raise CommandError(f"no cluster account(s) {', '.join(sorted(missing))}")
        summary = collect_all(profile, chosen, target_key=target)
        for note in summary.notes:
            self.stderr.write(note)
        if chosen:
            for quota in Quota.objects.filter(account__in=chosen, target__profile=profile):
                figure = iec(quota.bytes_used) if quota.known else f"unknown ({quota.error})"
                self.stdout.write(f"{quota.account} on {quota.target.key}: {figure}")
        self.stdout.write(
            f"{summary.collected} collected, {summary.failed} unknown in {summary.seconds:.2f} s"
        )
