"""Darshan checks, their replays and lab runs' logs in the admin: whose, which job or
run, and whether it was read. Never the logs themselves, and never edited."""

from django.contrib import admin
from django.db.models import Count, QuerySet
from django.http import HttpRequest

from jobio.models import JobCheck, Replay, RunLog
from portal.admin import RecordedAdmin


@admin.register(JobCheck)
class JobCheckAdmin(RecordedAdmin):
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


@admin.register(RunLog)
class RunLogAdmin(RecordedAdmin):
    list_display = ("received_at", "run", "size", "read", "problem", "missing", "logs_dropped_at")
    list_select_related = ("run",)
    search_fields = ("run__key", "run__cluster_username")
    date_hierarchy = "received_at"
    exclude = ("logs",)

    def get_queryset(self, request: HttpRequest) -> QuerySet[RunLog]:
        return super().get_queryset(request).defer("logs")

    @admin.display(description="bytes")
    def size(self, row: RunLog) -> int:
        return sum(row.sizes)

    @admin.display(boolean=True)
    def read(self, row: RunLog) -> bool:
        return row.io is not None


@admin.register(Replay)
class ReplayAdmin(RecordedAdmin):
    """Whose job was replayed, when, with which engine, and on how many targets."""

    list_display = ("created_at", "user", "engine", "job_bytes", "targets")
    list_select_related = ("user",)
    list_filter = ("engine",)
    search_fields = ("user__username", "check_of__label")
    date_hierarchy = "created_at"

    def get_queryset(self, request: HttpRequest) -> QuerySet[Replay]:
        return super().get_queryset(request).annotate(target_count=Count("runs"))

    @admin.display(description="targets", ordering="target_count")
    def targets(self, replay: Replay) -> int:
        return replay.target_count
