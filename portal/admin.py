from django.contrib import admin

from portal.models import ClusterAccount


@admin.register(ClusterAccount)
class ClusterAccountAdmin(admin.ModelAdmin):
    list_display = ("username", "user")
    search_fields = ("username", "user__username")
