"""The people of a course, for every test of courses: two instructors and their
courses, two trainees with a run each of 1a on $TMPDIR, an outsider and staff."""

import pytest
from django.contrib.auth.models import Permission

from exercises.courses.models import Enrollment
from tests.courses import add_run, make_course, make_instructor


def teacher(make_user):
    return make_instructor(make_user, "sl-instructor9")


@pytest.fixture
def people(dev_profile, make_user):
    inst_a, inst_b = teacher(make_user), make_user()
    inst_b.user_permissions.add(Permission.objects.get(codename="teach_course"))
    people = {
        "instructor": inst_a,
        "other instructor": inst_b,
        "trainee": make_user("sl-trainee5"),
        "classmate": make_user("sl-trainee6"),
        "outsider": make_user("sl-trainee7"),
        "staff": make_user(staff=True),
    }
    course = make_course(dev_profile, inst_a, "Storage 101")
    make_course(dev_profile, inst_b, "Another course")
    for who in ("trainee", "classmate"):
        Enrollment.objects.create(course=course, user=people[who])
    for who, mib in (("trainee", 100), ("classmate", 120)):
        add_run(people[who].cluster_account, course, "1a", "tmp", mib)
    people["course"] = course
    return people
