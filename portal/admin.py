from django.contrib import admin

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
