from django.urls import path

from exercises.quotas import views

app_name = "quotas"
urlpatterns = [
    path("storage/", views.my_storage, name="my-storage"),
    path("storage/scan", views.scan_start, name="scan-start"),
    path("storage-outlook/", views.outlook, name="outlook"),
    path("storage/scans/<uuid:key>/result", views.scan_result, name="scan-result"),
]
