from django.apps import AppConfig


class JobioConfig(AppConfig):
    """Check my job: a job's Darshan log read into an I/O profile, and advice from it."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "jobio"
    verbose_name = "Check my job"
