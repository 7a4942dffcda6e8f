from django.apps import AppConfig


class ExercisesConfig(AppConfig):
    """The history of the teaching domain's tables. Until the split into the apps
    beside this file (catalogue, quotas, courses, lab, calibration, advisor) it held
    their models; its migrations made the tables they still use, and its last one hands
    each model to its app without touching a row (0011)."""

    name = "exercises"
    verbose_name = "Exercises (history)"
