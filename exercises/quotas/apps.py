from django.apps import AppConfig


class QuotasConfig(AppConfig):
    """How full each cluster account is on each storage target, and the rounds that collect it."""

    name = "exercises.quotas"
    label = "quotas"
    verbose_name = "Quotas"

    def ready(self) -> None:
        # Every run the portal starts is checked against the quota (jobs/admission.py),
        # and scans and purges go to Slurm by the jobs' one road (jobs/app_jobs.py).
        from exercises.quotas.checks import run_problems
        from exercises.quotas.scan_jobs import ScanJobs
        from exercises.quotas.scans import JOB_KIND
        from jobs import app_jobs
        from jobs.admission import register_quota

        register_quota(run_problems)
        app_jobs.register(JOB_KIND, ScanJobs())
