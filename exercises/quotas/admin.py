"""Quotas in the admin, in the units people read (GiB, not bytes)."""

from django.contrib import admin

from exercises.quotas.models import Quota, StorageNotice, StorageScan, UsageSample
from portal.admin import RecordedAdmin
from portal.units import iec


def _size(value: int | None) -> str:
    return "–" if value is None else iec(value)


@admin.register(Quota)
class QuotaAdmin(admin.ModelAdmin):
    """Staff see anyone's figures here; users see only their own, on "My storage"."""

    list_display = ("account", "target", "used", "soft", "hard", "files_used", "collected_at")
    list_filter = ("target__profile", "collector")  # a target by name: one per profile
    list_select_related = ("account", "target")
    search_fields = ("account__username",)
    readonly_fields = ("attempted_at", "error")

    @admin.display(description="used", ordering="bytes_used")
    def used(self, quota: Quota) -> str:
        return _size(quota.bytes_used)

    @admin.display(description="soft limit", ordering="bytes_soft")
    def soft(self, quota: Quota) -> str:
        return _size(quota.bytes_soft)

    @admin.display(description="hard limit", ordering="bytes_hard")
    def hard(self, quota: Quota) -> str:
        return _size(quota.bytes_hard)


@admin.register(UsageSample)
class UsageSampleAdmin(RecordedAdmin):
    """The usage history My storage draws and forecasts from, as collected: never edited."""

    list_display = ("at", "account", "target", "used", "files_used")
    list_filter = ("target__profile",)
    list_select_related = ("account", "target")
    search_fields = ("account__username",)
    date_hierarchy = "at"

    @admin.display(description="used", ordering="bytes_used")
    def used(self, sample: UsageSample) -> str:
        return _size(sample.bytes_used)


@admin.register(StorageScan)
class StorageScanAdmin(RecordedAdmin):
    """Every storage scan and portal purge, as its job answered: never edited. The token's
    hash and the answer are not shown in the list."""

    list_display = ("started_at", "kind", "account", "status", "slurm_job_id", "ended_at")
    list_filter = ("kind", "status")
    list_select_related = ("account",)
    search_fields = ("account__username",)
    date_hierarchy = "started_at"
    exclude = ("token_hash",)


@admin.register(StorageNotice)
class StorageNoticeAdmin(RecordedAdmin):
    """The lines each user's storage crosses now, and whether the e-mail went."""

    list_display = ("crossed_at", "user", "line", "mailed")
    list_filter = ("mailed",)
    list_select_related = ("user",)
    search_fields = ("user__username", "line")
