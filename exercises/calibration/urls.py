from django.urls import path

from exercises.calibration import views

# Included before the lab's URLs (portal/urls.py): "calibration" is no exercise.
app_name = "calibration"
urlpatterns = [
    path("lab/calibration/", views.calibration_page, name="calibration"),
    path("lab/calibration/start", views.calibration_start, name="calibration-start"),
    path("lab/calibration/<int:pk>/cancel", views.calibration_cancel, name="calibration-cancel"),
]
