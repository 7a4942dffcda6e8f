"""What "My storage" and the banner show: per target, how full (space and files) against
the limit where trouble starts (the soft limit, else the hard one), coloured at 80% and
95%, the grace period when over a soft limit, when the figures were collected, the last
30 days, and when it fills at the recent pace (forecast.py), in words."""

import contextlib
import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from functools import cached_property

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.cache import cache
from django.utils import timezone
from django.utils.timesince import timeuntil
from redis.exceptions import RedisError

from exercises.catalogue.models import QuotaCollector, SiteProfile, StorageTarget
from exercises.quotas.forecast import WINDOW, Forecast, forecast
from exercises.quotas.history import Series, series, series_of
from exercises.quotas.models import Quota, StorageScan
from exercises.quotas.scan_pages import BANNER_DAYS, TargetScan
from portal.models import ClusterAccount
from portal.units import iec

WARNING_PERCENT = 80
CRITICAL_PERCENT = 95


class Level(StrEnum):
    OK = "ok"
    WARNING = "warning"
    CRITICAL = "critical"
    NO_LIMIT = "no-limit"


def level_of(percent: float | None) -> Level:
    if percent is None:
        return Level.NO_LIMIT
    if percent >= CRITICAL_PERCENT:
        return Level.CRITICAL
    if percent >= WARNING_PERCENT:
        return Level.WARNING
    return Level.OK


@dataclass(frozen=True)
class Meter:
    """Space or files: used against the limit where trouble starts."""

    what: str  # "Space" or "Files"
    used: int
    soft: int | None
    hard: int | None

    @property
    def limit(self) -> int | None:
        return self.soft if self.soft is not None else self.hard

    @property
    def percent(self) -> float | None:
        if self.limit is None:
            return None
        return 100.0 * self.used / self.limit if self.limit else 100.0

    @property
    def bar_percent(self) -> float:
        return min(self.percent or 0.0, 100.0)

    @property
    def level(self) -> Level:
        return level_of(self.percent)

    def show(self, value: int | None) -> str:
        if value is None:
            return "no limit"
        if self.what == "Space":
            return iec(value)
        return f"{value:,} file{'' if value == 1 else 's'}"

    @property
    def amount(self) -> str:
        """'3.2 GiB of 10 GiB', '990 of 1,000 files', '12 files, no limit'."""
        if self.limit is None:
            return f"{self.show(self.used)}, no limit"
        if self.what == "Space":
            return f"{iec(self.used)} of {iec(self.limit)}"
        return f"{self.used:,} of {self.show(self.limit)}"

    @property
    def text(self) -> str:
        """'3.2 GiB of 10 GiB (32%)', with the hard limit named when it differs."""
        if self.percent is None:
            return self.amount
        percent = "<1" if 0 < self.percent < 1 else f"{self.percent:.0f}"
        hard = ""
        if self.soft is not None and self.hard is not None and self.hard != self.soft:
            hard = f"; hard limit {self.show(self.hard)}"
        return f"{self.amount} ({percent}%{hard})"


def meters(quota: Quota) -> list[Meter]:
    found = [Meter("Space", quota.bytes_used or 0, quota.bytes_soft, quota.bytes_hard)]
    if quota.files_used is not None:
        found.append(Meter("Files", quota.files_used, quota.files_soft, quota.files_hard))
    return found


def grace_notes(quota: Quota, now: datetime | None = None) -> list[str]:
    """What being over a soft limit means for this user, in words."""
    now = now or timezone.now()
    notes = []
    for meter, ends in zip(
        meters(quota), (quota.bytes_grace_ends, quota.files_grace_ends), strict=False
    ):
        if meter.soft is None or meter.used <= meter.soft:
            continue
        over = f"You are over the soft limit of {meter.show(meter.soft)} ({meter.what.lower()})"
        if ends and ends > now:
            notes.append(
                f"{over}: {timeuntil(ends, now)} of grace left (until "
                f"{timezone.localtime(ends):%Y-%m-%d %H:%M}). Get below it by then, or "
                "writing stops."
            )
        elif ends:
            notes.append(f"{over} and its grace period is over: you cannot write until below it.")
        else:
            notes.append(f"{over}: get below it before the grace period ends.")
    return notes


# Where a user's figures come from, in words a user reads on "My storage" (the
# collectors' names, QuotaCollector's labels, are the admin's).
SOURCES = {
    QuotaCollector.LOCAL: "the portal adds up the files in your directory, and the limit "
    "is this site's default quota, the same for every account",
    QuotaCollector.ONDEMAND: "the quota file the site publishes for Open OnDemand, with the "
    "limits the site set for your account",
}
FROM_THE_FILESYSTEM = (
    "the filesystem's own count for your account ({tool}), with the limits the site set for you"
)


def source_of(collector: str) -> str:
    """Where a Quota's figures and limit come from, as a sentence's second half."""
    if collector in SOURCES:
        return SOURCES[collector]
    return FROM_THE_FILESYSTEM.format(tool=QuotaCollector(collector).label)


def points_of(series: Series, meter: "Meter") -> list[tuple[datetime, int]]:
    """The meter's own figures (space, or files) out of a target's history."""
    index = 1 if meter.what == "Space" else 2
    return [(row[0], row[index]) for row in series if row[index] is not None]


def fills_in(fc: Forecast, now: datetime) -> str:
    """'in about 6 days (5–8), around 3 December'."""
    days = fc.days or 0.0
    when = timezone.localtime(now + timedelta(days=days))
    spread = ""
    if fc.soonest is not None and fc.latest is not None:
        # Whole days that hold the range; a tenth of a day's jitter is no range.
        soonest, latest = math.floor(fc.soonest + 0.1), math.ceil(fc.latest - 0.1)
        spread = f" ({soonest}–{latest})" if latest > soonest else ""
    about = (
        "within a day" if days < 1 else f"in about {days:.0f} day{'s' if round(days) != 1 else ''}"
    )
    return f"{about}{spread}, around {when:%-d %B}"


@dataclass
class TargetStorage:
    """One target on the "My storage" page."""

    target: StorageTarget
    directory: str
    quota: Quota | None
    reported: bool  # the site collects usage on this target
    history: Series = field(default_factory=list)  # the last 30 days
    scanned: TargetScan | None = None  # what the latest storage scan found here

    @cached_property
    def forecasts(self) -> list[tuple["Meter", Forecast, str]]:
        """Per meter with a limit: its forecast, and the sentence My storage says."""
        now = timezone.now()
        found = []
        for meter in self.meters:
            if meter.limit is None:
                continue
            fc = forecast(points_of(self.history, meter), meter.used, meter.limit, now)
            found.append((meter, fc, self._said(meter, fc, now)))
        return found

    def _said(self, meter: "Meter", fc: Forecast, now: datetime) -> str:
        what = "Space" if meter.what == "Space" else "The file count"
        if fc.days is None:
            return f"{what}: no forecast. {fc.why}"
        if fc.days == 0:
            return f"{what}: {fc.why}"
        pace = iec(fc.per_day) if meter.what == "Space" else f"{fc.per_day:,.0f} files"
        return (
            f"{what} fills {fills_in(fc, now)}, at your pace of the last {WINDOW.days} "
            f"days (+{pace} a day)."
        )

    @property
    def chart(self) -> dict:
        """The last 30 days of space used, in GiB, and the limit (storage.js)."""
        limit = self.meters[0].limit if self.meters else None
        return {
            "labels": [
                timezone.localtime(at).strftime("%-d %b %H:%M") for at, _, _ in self.history
            ],
            "used": [round(used / 2**30, 3) for _, used, _ in self.history],
            "limit": round(limit / 2**30, 3) if limit else None,
        }

    @property
    def known(self) -> bool:
        return self.quota is not None and self.quota.known

    @property
    def source(self) -> str:
        return source_of(self.quota.collector) if self.quota else ""

    @cached_property
    def meters(self) -> list[Meter]:
        return meters(self.quota) if self.known else []

    @property
    def level(self) -> str:
        if not self.known:
            return "unknown"
        worst = max((m.level for m in self.meters), key=_SEVERITY.index, default=Level.OK)
        return worst.value

    @cached_property
    def grace_notes(self) -> list[str]:
        return grace_notes(self.quota) if self.known else []


_SEVERITY = [Level.NO_LIMIT, Level.OK, Level.WARNING, Level.CRITICAL]


def for_account(profile: SiteProfile, account: ClusterAccount) -> list[TargetStorage]:
    """Every target of the profile, with the account's figures and history (3 queries)."""
    targets = list(profile.targets.select_related("quota_source"))
    mine = Quota.objects.filter(account=account, target__profile=profile)
    quotas = {q.target_id: q for q in mine}
    past = series(account)
    return [
        TargetStorage(
            target=t,
            directory=t.directory_for(account.username),
            quota=quotas.get(t.pk),
            reported=t.pk in quotas or hasattr(t, "quota_source"),
            history=past.get(t.pk, []),
        )
        for t in targets
    ]


@dataclass(frozen=True)
class Alert:
    """A target past the warning threshold, as the banner says it (plain values: cached)."""

    target_name: str
    what: str  # "space" or "files"
    percent: float
    level: str
    amount: str  # "3.5 MiB of 4 MiB"
    fills_in: str = ""  # at the recent pace, within a week: "in about 5 days, around 2 Dec"
    purge: str = ""  # files due for purge within 3 days: "3 files (12 MiB) ... within 3 days"


def alerts_for(user: AbstractBaseUser) -> list[Alert]:
    """The user's targets at or past the warning threshold, fullest first (one query)."""
    quotas = Quota.objects.filter(
        account__user=user,
        target__profile__name=settings.SITE_PROFILE,
        error="",
        bytes_used__isnull=False,
        collected_at__isnull=False,
    ).select_related("target")
    quotas = list(quotas)
    alerts = [
        Alert(quota.target.name, meter.what.lower(), meter.percent, meter.level.value, meter.amount)
        for quota in quotas
        for meter in meters(quota)
        if meter.percent is not None and meter.percent >= WARNING_PERCENT
    ]
    return _purging(user) + _filling(quotas) + sorted(alerts, key=lambda a: -a.percent)


def _purging(user: AbstractBaseUser) -> list[Alert]:
    """The targets where the latest scan found files the purge takes within 3 days (1
    query, and 1 more when there are some)."""
    scan = (
        StorageScan.objects.filter(
            account__user=user, kind=StorageScan.Kind.SCAN, status=StorageScan.Status.DONE
        )
        .order_by("-started_at")
        .only("found")
        .first()
    )
    due = {}
    for key, walk in (scan.found if scan else {}).items():
        tally = ((walk.get("purge") or {}).get("due") or {}).get(BANNER_DAYS) or {}
        if tally.get("files"):
            due[key] = (tally["files"], tally["bytes"])
    if not due:
        return []
    names = StorageTarget.objects.filter(profile__name=settings.SITE_PROFILE, key__in=due)
    return [
        Alert(name, "purge", 0.0, Level.WARNING.value, iec(due[key][1]), purge=_files(due[key][0]))
        for key, name in names.values_list("key", "name")
    ]


def _files(count: int) -> str:
    return f"{count:,} file{'s' if count != 1 else ''}"


def filling(quotas: list[Quota]) -> list[tuple[Quota, Meter, Forecast]]:
    """The quotas' meters that fill within a week at the recent pace, soonest first (1
    query, whatever the accounts)."""
    if not quotas:
        return []
    now = timezone.now()
    past = series_of(quotas, days=WINDOW.days)
    found = []
    for quota in quotas:
        for meter in meters(quota):
            if meter.limit is None or meter.used >= meter.limit:
                continue
            points = points_of(past.get((quota.account_id, quota.target_id), []), meter)
            fc = forecast(points, meter.used, meter.limit, now)
            if fc.within_a_week:
                found.append((quota, meter, fc))
    return sorted(found, key=lambda found: found[2].days or 0.0)


def _filling(quotas: list[Quota]) -> list[Alert]:
    """The banner's targets that fill within a week, soonest first (1 query)."""
    now = timezone.now()
    return [
        Alert(quota.target.name, meter.what.lower(), meter.percent, Level.WARNING.value,
              meter.amount, fills_in(fc, now))
        for quota, meter, fc in filling(quotas)
    ]  # fmt: skip


# The banner is on every page, so its answer is kept in the cache (Redis) and dropped
# whenever the user's figures are stored (exercises/quotas/store.py); the expiry covers
# edits made elsewhere (the admin). The account's creation time is part of the entry, so
# a user id reused by a new database never inherits someone else's banner.
ALERTS_CACHE_SECONDS = 300


def _alerts_key(user_id: int) -> str:
    return f"quota:alerts:{user_id}"


def cached_alerts_for(user: AbstractBaseUser) -> list[Alert]:
    stamp = user.date_joined.isoformat()
    try:
        cached = cache.get(_alerts_key(user.pk))
    except RedisError:
        cached = None  # no cache: the database still answers
    if cached and cached[0] == stamp:
        return cached[1]
    alerts = alerts_for(user)
    with contextlib.suppress(RedisError):
        cache.set(_alerts_key(user.pk), (stamp, alerts), ALERTS_CACHE_SECONDS)
    return alerts


def forget_alerts(user_id: int) -> None:
    with contextlib.suppress(RedisError):  # else the entry expires on its own
        cache.delete(_alerts_key(user_id))
