"""Creates (or resets) the dev site's demo logins, linked to the cluster accounts
that docker/slurm/start.sh creates. For the dev cluster only."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction

from portal.models import ClusterAccount

# (portal login, cluster account or None, staff)
DEMO_ACCOUNTS = [
    ("admin", None, True),
    ("instructor", "sl-instructor", False),
    ("trainee1", "sl-trainee1", False),
    ("trainee2", "sl-trainee2", False),
    ("trainee3", "sl-trainee3", False),
]


class Command(BaseCommand):
    help = "Create or reset the demo logins of the dev site."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--password", default="storagelab")

    @transaction.atomic
    def handle(self, *args: object, password: str, **options: object) -> None:
        User = get_user_model()
        for username, cluster_username, staff in DEMO_ACCOUNTS:
            user, _ = User.objects.get_or_create(username=username)
            user.is_staff = user.is_superuser = staff
            user.set_password(password)
            user.save()
            if cluster_username:
                ClusterAccount.objects.update_or_create(
                    user=user, defaults={"username": cluster_username}
                )
        names = ", ".join(name for name, _, _ in DEMO_ACCOUNTS)
        self.stdout.write(f"demo accounts ready: {names}")
