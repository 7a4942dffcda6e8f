from django.urls import path

from jobio import views

app_name = "jobio"
urlpatterns = [
    path("", views.check_page, name="check"),
    path("upload", views.check_upload, name="upload"),
    path("job", views.check_job, name="job"),
    path("<uuid:pk>/", views.check_detail, name="detail"),
    path("<uuid:pk>/replay", views.replay_start, name="replay-start"),
    path("replays/<uuid:pk>/", views.replay_detail, name="replay"),
    path("replays/<uuid:pk>/cancel", views.replay_cancel, name="replay-cancel"),
    path("runs/<uuid:key>/logs", views.run_logs, name="run-logs"),
    path("runs/<uuid:key>/io", views.run_io, name="run-io"),
]
