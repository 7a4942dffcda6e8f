"""Calibration rounds in the admin: looked at, never edited (their figures are what
their runs measured; the calibration page starts and cancels them)."""

from django.contrib import admin
from django.http import HttpRequest

from exercises.calibration.models import Calibration


@admin.register(Calibration)
class CalibrationAdmin(admin.ModelAdmin):
    list_display = ("started_at", "profile", "started_by", "repeat", "finished_at", "summary")
    list_filter = ("profile",)
    list_select_related = ("profile", "started_by")
    date_hierarchy = "started_at"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
