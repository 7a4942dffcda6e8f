from django.core.management.base import BaseCommand, CommandError

from jobs.health import check_slurm


class Command(BaseCommand):
    help = "Print the slurmrestd API version in use and the cluster's name."

    def handle(self, *args: object, **options: object) -> None:
        check = check_slurm()  # the check /healthz makes
        if not check.facts:
            raise CommandError(f"slurmrestd: {check.detail}")
        for name, value in check.facts.items():
            self.stdout.write(f"{name}: {value}")
