from django.apps import AppConfig


class PredictionsConfig(AppConfig):
    """Predict, then measure: a trainee's guess of how an exercise's targets rank,
    made before their first run of it, and what the runs then said of it."""

    name = "exercises.predictions"
    label = "predictions"
    verbose_name = "Predictions"
