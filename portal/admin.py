from django.contrib import admin
from django.http import HttpRequest

from portal.models import ClusterAccount


@admin.register(ClusterAccount)
class ClusterAccountAdmin(admin.ModelAdmin):
    list_display = ("username", "user")
    search_fields = ("username", "user__username")

    # Who linked which login to which Unix account stays in the admin's history
    # (LogEntry: the acting admin, the time, and these words).
    def log_addition(self, request, obj, message):
        return super().log_addition(request, obj, self._linked(obj))

    def log_change(self, request, obj, message):
        return super().log_change(request, obj, self._linked(obj))

    @staticmethod
    def _linked(account: ClusterAccount) -> str:
        login = account.user.get_username()
        return f"Linked portal login {login} to cluster account {account.username}"


class RecordedAdmin(admin.ModelAdmin):
    """A record the portal keeps as it happened (a job's answer, a log's reading, a
    collected figure): staff list it and may delete it, never add or edit it by hand."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
