"""Predictions in the admin: staff see what a trainee guessed, and when."""

from django.contrib import admin

from exercises.predictions.models import Prediction


@admin.register(Prediction)
class PredictionAdmin(admin.ModelAdmin):
    list_display = ("user", "exercise", "order", "made_at")
    list_filter = ("exercise__profile", "exercise__key")
    list_select_related = ("user", "exercise")
    search_fields = ("user__username",)
    date_hierarchy = "made_at"
