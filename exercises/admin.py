from django.contrib import admin

from exercises.models import Quota, QuotaSource, StorageTarget


@admin.register(StorageTarget)
class StorageTargetAdmin(admin.ModelAdmin):
    list_display = ("name", "key", "filesystem", "path_template", "in_memory")


@admin.register(QuotaSource)
class QuotaSourceAdmin(admin.ModelAdmin):
    list_display = ("target", "collector", "filesystem")


@admin.register(Quota)
class QuotaAdmin(admin.ModelAdmin):
    """Staff see anyone's figures here; users see only their own, on "My storage"."""

    list_display = ("account", "target", "bytes_used", "bytes_soft", "bytes_hard", "collected_at")
    list_filter = ("target", "collector")
    search_fields = ("account__username",)
    readonly_fields = ("attempted_at", "error")
