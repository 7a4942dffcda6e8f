from django.apps import AppConfig


class JobioConfig(AppConfig):
    """Check my job: a job's Darshan log read into its I/O (JobIO), and advice from it."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "jobio"
    verbose_name = "Check my job"

    def ready(self) -> None:
        # A run's logs count in their owner's retention cap with their raw outputs.
        from jobio.runs import KEPT_LOGS
        from jobs.retention import register

        register(KEPT_LOGS)
