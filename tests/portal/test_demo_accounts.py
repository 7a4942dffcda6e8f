"""The demo's logins and course (`make demo` runs create_demo_accounts): a class
exists from the first login, and running the command again changes nothing."""

import io

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from exercises.courses.access import can_teach
from exercises.courses.models import Course

pytestmark = pytest.mark.django_db


def test_the_demo_logins_are_refused_outside_debug(dev_profile) -> None:
    """Logins with a password everyone knows, an admin among them, never at a site."""
    with pytest.raises(CommandError, match="for a dev machine only"):
        call_command("create_demo_accounts", stdout=io.StringIO())
    assert not User.objects.filter(username__in=["admin", "trainee1"]).exists()


def test_the_demo_course_is_taught_by_the_instructor_and_joined_by_the_trainees(
    dev_profile, settings
) -> None:
    settings.DEBUG = True  # as make demo runs the command
    for _ in range(2):  # again: nothing doubles
        call_command("create_demo_accounts", stdout=io.StringIO())

    course = Course.objects.get(title="Storage course (demo)")
    assert [u.username for u in course.instructors.all()] == ["instructor"]
    assert sorted(e.user.username for e in course.enrollments.all()) == [
        "trainee1",
        "trainee2",
        "trainee3",
    ]
    assert course.is_open and course.exercises.count() == dev_profile.exercises.count()
    assert set(course.targets.all()) == set(dev_profile.targets.all())
    assert can_teach(User.objects.get(username="instructor"))
    assert User.objects.get(username="trainee1").cluster_account.username == "sl-trainee1"
    # The weather's canaries run as an account of their own, which nobody logs in as.
    weather = User.objects.get(username="weather")
    assert weather.cluster_account.username == "sl-weather"
    assert not weather.has_usable_password() and not weather.is_staff
    assert not course.enrollments.filter(user=weather).exists()
