"""Creates (or resets) the dev site's demo logins, linked to the cluster accounts
that docker/slurm/start.sh creates, and a demo course that the instructor teaches
and the trainees joined, so the course pages show a class from the first login.
For the dev cluster only: it refuses to run without DEBUG."""

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from exercises.catalogue import profiles
from exercises.courses.models import Course, Enrollment
from portal.logins import instructors_group
from portal.models import ClusterAccount

# (portal login, cluster account or None, staff or teaching, or "service": no login)
DEMO_ACCOUNTS = [
    ("admin", None, True),
    ("instructor", "sl-instructor", "teach"),
    ("trainee1", "sl-trainee1", False),
    ("trainee2", "sl-trainee2", False),
    ("trainee3", "sl-trainee3", False),
    # The account the weather's canaries run as (WEATHER_ACCOUNT, docker/dev/env.sh): a
    # site's own, apart from every person's, so that its runs go in turn with no one's.
    ("weather", "sl-weather", "service"),
]
DEMO_COURSE = "Storage course (demo)"


class Command(BaseCommand):
    help = "Create or reset the demo logins of the dev site."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--password", default="storagelab")

    @transaction.atomic
    def handle(self, *args: object, password: str, **options: object) -> None:
        if not settings.DEBUG:
            # Logins with a password everyone knows, one of them staff: never at a site.
            raise CommandError(
                "the demo logins (password storagelab, an admin among them) are for a dev "
                "machine only: run with DEBUG=true there (make demo does)"
            )
        User = get_user_model()
        instructors = instructors_group()
        for username, cluster_username, role in DEMO_ACCOUNTS:
            user, _ = User.objects.get_or_create(username=username)
            user.is_staff = user.is_superuser = role is True
            if role == "service":
                user.set_unusable_password()  # runs canaries; nobody logs in as it
            else:
                user.set_password(password)
            user.save()
            if role == "teach":
                user.groups.add(instructors)
                # The demo's instructor calibrates the dev site (make demo does, as them).
                user.user_permissions.add(Permission.objects.get(codename="run_calibration"))
            if cluster_username:
                ClusterAccount.objects.update_or_create(
                    user=user, defaults={"username": cluster_username}
                )
        names = ", ".join(name for name, _, role in DEMO_ACCOUNTS if role != "service")
        self.stdout.write(f"demo accounts ready: {names}")
        course = self.demo_course(User)
        if course:
            self.stdout.write(f"demo course: {course.title}, join code {course.join_code}")

    def demo_course(self, User: type) -> Course | None:
        """Every exercise on every target of the site profile in use (once loaded)."""
        profile = profiles.active()
        if profile is None:
            return None
        course, created = Course.objects.get_or_create(title=DEMO_COURSE, profile=profile)
        if created:
            course.exercises.set(profile.exercises.all())
            course.targets.set(profile.targets.all())
        course.instructors.add(User.objects.get(username="instructor"))
        for username, _, role in DEMO_ACCOUNTS:
            if role is False:
                Enrollment.objects.get_or_create(
                    course=course, user=User.objects.get(username=username)
                )
        return course
