from django.apps import AppConfig


class CalibrationConfig(AppConfig):
    """The site's own references, measured by rounds of every exercise on every target."""

    name = "exercises.calibration"
    label = "calibration"
    verbose_name = "Calibration"
