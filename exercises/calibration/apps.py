from django.apps import AppConfig


class CalibrationConfig(AppConfig):
    """The site's own references, measured by rounds of every exercise on every target."""

    name = "exercises.calibration"
    label = "calibration"
    verbose_name = "Calibration"

    def ready(self) -> None:
        # The pages that show the site's figures, below this app, say where its rounds
        # stand where a figure is missing (exercises/catalogue/measuring.py).
        from exercises.calibration.standing import standing
        from exercises.catalogue import measuring

        measuring.register(standing)
