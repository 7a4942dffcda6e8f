from django.contrib import admin

from exercises.quotas.models import Quota


@admin.register(Quota)
class QuotaAdmin(admin.ModelAdmin):
    """Staff see anyone's figures here; users see only their own, on "My storage"."""

    list_display = ("account", "target", "bytes_used", "bytes_soft", "bytes_hard", "collected_at")
    list_filter = ("target", "collector")
    search_fields = ("account__username",)
    readonly_fields = ("attempted_at", "error")
