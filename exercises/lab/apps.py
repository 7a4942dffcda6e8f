from django.apps import AppConfig


class LabConfig(AppConfig):
    """The lab: starting runs of an exercise, and the pages that compare their figures."""

    name = "exercises.lab"
    label = "lab"
    verbose_name = "Lab"
