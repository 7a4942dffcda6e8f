from django.apps import AppConfig


class JobsConfig(AppConfig):
    name = "jobs"
    verbose_name = "Benchmark jobs"

    def ready(self) -> None:
        from jobs.health import check_slurm
        from portal.health import register

        register(check_slurm)
