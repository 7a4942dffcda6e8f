from django.apps import AppConfig


class AdvisorConfig(AppConfig):
    """Which target suits a workload: from a questionnaire or a job's I/O (a Darshan log)."""

    name = "exercises.advisor"
    label = "advisor"
    verbose_name = "Advisor"
