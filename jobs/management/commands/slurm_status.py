"""What a site's Slurm says to the portal: the check /healthz makes (slurmrestd reached,
the portal's token taken, the API version and release, slurmctld's and slurmrestd's
readiness), and with --try-job USER whether Slurm takes a job of that cluster account.
Each failure names what to look at next."""

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from jobs.health import check_slurm
from jobs.slurm import JobSpec, SlurmError, get_client

TRIAL = JobSpec(
    name="storagelab-status",
    script="#!/bin/sh\ntrue\n",
    partition="debug",
    working_directory="/",  # it writes nothing, and / is everyone's to enter
    standard_output="/dev/null",
    time_limit_minutes=1,
    environment={"PATH": "/usr/bin:/bin"},
)


class Command(BaseCommand):
    help = (
        "Print the slurmrestd API version in use, the Slurm release and the cluster's name; "
        "with --try-job USER, submit a job that runs `true` as that cluster account."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--try-job", metavar="USER", help="a cluster account to submit a trivial job as"
        )

    def handle(self, *args: object, **options: object) -> None:
        check = check_slurm()  # the check /healthz makes
        if not check.facts:
            raise CommandError(f"slurmrestd: {check.detail}")
        for name, value in check.facts.items():
            self.stdout.write(f"{name}: {value}")
        if not check.ok:
            raise CommandError(f"slurmrestd answers, but not all is well: {check.detail}")
        if user := options.get("try_job"):
            self.try_job(str(user))

    def try_job(self, user: str) -> None:
        client = get_client()
        spec = TRIAL.model_copy(update={"partition": settings.SLURM_PARTITION})
        try:
            job_id = client.submit(user, spec)
        except SlurmError as e:
            said = str(e).rstrip(".")
            raise CommandError(
                f"Slurm took no job of {user}: {said}. A refusal of user nobody means "
                f"slurmctld's host does not know {user}: it must resolve the account (the "
                "same UID as on the nodes)."
            ) from None
        self.stdout.write(f"job of {user}: accepted as job {job_id} (it runs `true`)")
