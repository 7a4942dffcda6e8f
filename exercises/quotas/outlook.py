"""The site's outlook, for staff: every user whose storage fills within 7 days at the
recent pace, or whose latest scan found files the purge takes within 3 days, soonest
first (3 queries, whatever the number of users); in the Open OnDemand export too."""

from dataclasses import dataclass

from django.utils import timezone

from exercises.catalogue.models import SiteProfile
from exercises.quotas.models import Quota, StorageScan
from exercises.quotas.scan_pages import BANNER_DAYS
from exercises.quotas.status import filling, fills_in
from portal.units import iec


@dataclass(frozen=True)
class Concern:
    login: str
    account: str
    target: str
    what: str  # "space fills in about 4 days (3–5), around 1 December" / "purge: 12 files …"
    days: float  # for the order: days to full, or 0 for a purge due
    path: str = ""  # the user's directory on the target
    purge_files: int | None = None  # files due within BANNER_DAYS (a purge's concern)
    purge_bytes: int | None = None

    def as_data(self) -> dict:
        fills = self.purge_files is None
        return {
            "user": self.account,
            "path": self.path,
            "days_to_full": round(self.days, 1) if fills else None,
            "purge_due_files": self.purge_files,
            "purge_due_bytes": self.purge_bytes,
            "purge_within_days": None if fills else int(BANNER_DAYS),
        }


def concerns(profile: SiteProfile) -> list[Concern]:
    now = timezone.now()
    quotas = list(
        Quota.objects.filter(
            target__profile=profile, error="", bytes_used__isnull=False, collected_at__isnull=False
        ).select_related("account__user", "target")
    )
    found = [
        Concern(
            quota.account.user.get_username(),
            quota.account.username,
            quota.target.name,
            f"{meter.what.lower()} fills {fills_in(fc, now)}",
            fc.days or 0.0,
            quota.target.directory_for(quota.account.username),
        )
        for quota, meter, fc in filling(quotas)
    ]
    targets = {t.key: t for t in profile.targets.all()}
    latest = (
        StorageScan.objects.filter(kind=StorageScan.Kind.SCAN, status=StorageScan.Status.DONE)
        .order_by("account", "-started_at")
        .distinct("account")
        .select_related("account__user")
    )
    for scan in latest:
        for key, walk in scan.found.items():
            tally = ((walk.get("purge") or {}).get("due") or {}).get(BANNER_DAYS) or {}
            if tally.get("files") and key in targets:
                found.append(
                    Concern(
                        scan.account.user.get_username(),
                        scan.account.username,
                        targets[key].name,
                        f"the purge takes {tally['files']:,} file(s), {iec(tally['bytes'])}, "
                        f"within {BANNER_DAYS} days (scanned {scan.ended_at:%Y-%m-%d %H:%M})",
                        0.0,
                        targets[key].directory_for(scan.account.username),
                        tally["files"],
                        tally["bytes"],
                    )
                )
    return sorted(found, key=lambda c: (c.days, c.login, c.target))
