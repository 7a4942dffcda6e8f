"""Each account's usage on each target over time: a sample kept from a collection at
most once an hour (`keep`), thinned to the last of each day once a week old and dropped
past QUOTA_HISTORY_DAYS (`thin`, hourly by beat), read back per target for My storage's
chart and forecast (`series`)."""

from collections import defaultdict
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Exists, OuterRef, QuerySet
from django.db.models.functions import TruncDate
from django.utils import timezone

from exercises.quotas.models import Quota, UsageSample
from portal.models import ClusterAccount

SPACING = timedelta(minutes=55)  # a collection every 10 min: one sample an hour
HOURLY_FOR = timedelta(days=7)  # then one a day
CHART_DAYS = 30

Series = list[tuple[datetime, int, int | None]]  # (when, bytes, files), oldest first


def keep(quota: Quota) -> bool:
    """Keeps the quota's figures as a sample, unless one was kept within SPACING."""
    if quota.bytes_used is None or quota.collected_at is None:
        return False
    since = quota.collected_at - SPACING
    recent = UsageSample.objects.filter(
        account_id=quota.account_id, target_id=quota.target_id, at__gt=since
    )
    if recent.exists():
        return False
    UsageSample.objects.create(
        account_id=quota.account_id,
        target_id=quota.target_id,
        at=quota.collected_at,
        bytes_used=quota.bytes_used,
        files_used=quota.files_used,
    )
    return True


def thin(now: datetime | None = None) -> int:
    """Drops samples past QUOTA_HISTORY_DAYS, and all but the last of each day among
    those older than a week. Returns how many went."""
    now = now or timezone.now()
    gone, _ = UsageSample.objects.filter(
        at__lt=now - timedelta(days=settings.QUOTA_HISTORY_DAYS)
    ).delete()
    # Among those older than a week, each that a later sample of the same day follows.
    same_day_later = UsageSample.objects.annotate(day=TruncDate("at")).filter(
        account_id=OuterRef("account_id"),
        target_id=OuterRef("target_id"),
        day=OuterRef("day"),
        at__gt=OuterRef("at"),
    )
    old = UsageSample.objects.filter(at__lt=now - HOURLY_FOR).annotate(day=TruncDate("at"))
    followed = old.filter(Exists(same_day_later)).values("pk")
    dropped, _ = UsageSample.objects.filter(pk__in=followed).delete()
    return gone + dropped


def series(account: ClusterAccount, days: int = CHART_DAYS) -> dict[int, Series]:
    """Target id -> the account's samples of the last `days`, oldest first (1 query)."""
    found = _series(UsageSample.objects.filter(account=account), days)
    return {target_id: samples for (_, target_id), samples in found.items()}


def series_of(quotas: list[Quota], days: int) -> dict[tuple[int, int], Series]:
    """(account id, target id) -> the samples of the last `days` of these quotas (1 query)."""
    samples = UsageSample.objects.filter(
        account_id__in={q.account_id for q in quotas},
        target_id__in={q.target_id for q in quotas},
    )
    return _series(samples, days)


def _series(samples: QuerySet[UsageSample], days: int) -> dict[tuple[int, int], Series]:
    since = timezone.now() - timedelta(days=days)
    rows = samples.filter(at__gte=since).order_by("at")
    found: dict[tuple[int, int], Series] = defaultdict(list)
    for account_id, target_id, at, used, files in rows.values_list(
        "account_id", "target_id", "at", "bytes_used", "files_used"
    ):
        found[(account_id, target_id)].append((at, used, files))
    return dict(found)
