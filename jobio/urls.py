from django.urls import path

from jobio import views

app_name = "jobio"
urlpatterns = [
    path("", views.check_page, name="check"),
    path("upload", views.check_upload, name="upload"),
    path("job", views.check_job, name="job"),
    path("<uuid:pk>/", views.check_detail, name="detail"),
    path("runs/<uuid:key>/logs", views.run_logs, name="run-logs"),
    path("runs/<uuid:key>/io", views.run_io, name="run-io"),
]
