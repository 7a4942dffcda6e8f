from django.contrib import admin

from exercises.catalogue.models import QuotaSource, StorageTarget


@admin.register(StorageTarget)
class StorageTargetAdmin(admin.ModelAdmin):
    list_display = ("name", "key", "filesystem", "path_template", "in_memory")


@admin.register(QuotaSource)
class QuotaSourceAdmin(admin.ModelAdmin):
    list_display = ("target", "collector", "filesystem")
