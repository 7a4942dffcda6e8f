from django.core.management.base import BaseCommand, CommandError

from jobs.slurm import SlurmError, get_client


class Command(BaseCommand):
    help = "Print the slurmrestd API version in use and the cluster's name."

    def handle(self, *args: object, **options: object) -> None:
        client = get_client()
        try:
            ping = client.ping()
            cluster = client.cluster_name()
        except SlurmError as e:
            raise CommandError(f"slurmrestd: {e}") from None
        self.stdout.write(f"api_version: {ping.api_version}")
        self.stdout.write(f"cluster: {cluster or '(not reported)'}")
        self.stdout.write(f"slurm_release: {ping.release}")
        self.stdout.write(f"controller: {ping.hostname} ({'up' if ping.up else 'DOWN'})")
