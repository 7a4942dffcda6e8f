from django.contrib import admin

from exercises.models import StorageTarget


@admin.register(StorageTarget)
class StorageTargetAdmin(admin.ModelAdmin):
    list_display = ("name", "key", "filesystem", "path_template", "in_memory")
