"""Darshan checks in the admin: whose, which job, and whether it was read. Never the
log itself (an upload's bytes wait only until they are read) and never edited."""

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from jobio.models import JobCheck


@admin.register(JobCheck)
class JobCheckAdmin(admin.ModelAdmin):
    list_display = ("created_at", "user", "source", "label", "job_id", "read")
    list_filter = ("source",)
    list_select_related = ("user",)
    search_fields = ("user__username", "label", "job_id")
    date_hierarchy = "created_at"
    exclude = ("log",)

    def get_queryset(self, request: HttpRequest) -> QuerySet[JobCheck]:
        return super().get_queryset(request).defer("log")

    @admin.display(boolean=True)
    def read(self, check: JobCheck) -> bool:
        return not check.reading

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
