"""The site's catalogue in the admin: what a profile loaded, to look at and correct.
Every list names the profile, since a database may hold several (vsc3, dev, ...)."""

from django.contrib import admin

from exercises.catalogue.models import (
    Exercise,
    MeasuredReference,
    QuotaSource,
    ReferenceResult,
    SiteProfile,
    StorageTarget,
)


@admin.register(SiteProfile)
class SiteProfileAdmin(admin.ModelAdmin):
    list_display = ("name", "title", "engine", "node_memory_gib")
    search_fields = ("name", "title")


@admin.register(StorageTarget)
class StorageTargetAdmin(admin.ModelAdmin):
    list_display = ("name", "key", "profile", "filesystem", "path_template", "in_memory")
    list_filter = ("profile", "in_memory", "persistent", "shared")
    list_select_related = ("profile",)
    search_fields = ("name", "key", "filesystem")


@admin.register(Exercise)
class ExerciseAdmin(admin.ModelAdmin):
    list_display = ("key", "title", "profile", "engine", "pattern", "processes", "seconds")
    list_filter = ("profile", "pattern", "engine")
    list_select_related = ("profile",)
    search_fields = ("key", "title")


@admin.register(ReferenceResult)
class ReferenceResultAdmin(admin.ModelAdmin):
    list_display = ("exercise", "target", "metric", "value", "unit", "source")
    list_filter = ("exercise__profile", "metric", "unit")
    list_select_related = ("exercise", "target")
    search_fields = ("exercise__key", "target__name", "source")


@admin.register(MeasuredReference)
class MeasuredReferenceAdmin(admin.ModelAdmin):
    list_display = ("exercise", "target", "metric", "median", "low", "high", "measured_at")
    list_filter = ("exercise__profile", "metric")
    list_select_related = ("exercise", "target")
    date_hierarchy = "measured_at"


@admin.register(QuotaSource)
class QuotaSourceAdmin(admin.ModelAdmin):
    list_display = ("target", "profile", "collector", "filesystem")
    list_filter = ("target__profile", "collector")
    list_select_related = ("target__profile",)

    @admin.display(ordering="target__profile__name")
    def profile(self, source: QuotaSource) -> str:
        return source.target.profile.name
