from django.urls import path

from jobs import views

app_name = "jobs"
urlpatterns = [
    path("runs/<uuid:key>/", views.run_detail, name="run-detail"),
    path("runs/<uuid:key>/output", views.run_output, name="run-output"),
    path("runs/<uuid:key>/result", views.run_result, name="run-result"),
    path("runs/<uuid:key>/cancel", views.run_cancel, name="run-cancel"),
]
