"""Closing a course in Debian's Chromium: the instructor is asked first, the overview
then says since when it is closed, and the trainee's lab says their runs no longer
count for it."""

import pytest
from django.utils import timezone
from playwright.sync_api import Browser, expect

from exercises.courses.models import Course, Enrollment
from tests.courses import make_course, make_instructor
from tests.e2e.browser import ARTIFACTS, log_in


@pytest.mark.django_db(transaction=True)
def test_an_instructor_closes_a_course_and_the_trainee_is_told(
    live_server, dev_profile, make_user, browser: Browser
) -> None:
    instructor = make_instructor(make_user)
    trainee = make_user("sl-closing1")
    course = make_course(dev_profile, instructor, "Storage course")
    Enrollment.objects.create(course=course, user=trainee)
    teacher = browser.new_context().new_page()
    log_in(teacher, live_server.url, instructor)
    teacher.goto(f"{live_server.url}/courses/{course.pk}/overview")

    teacher.get_by_role("button", name="Close the course").click()

    expect(teacher.get_by_role("heading", name="Close Storage course?")).to_be_visible()
    ARTIFACTS.mkdir(exist_ok=True)
    teacher.screenshot(path=ARTIFACTS / "course-close-confirm.png", full_page=True)
    assert Course.objects.get(pk=course.pk).is_open  # nothing happened yet
    teacher.get_by_role("button", name="Close Storage course").click()

    since = timezone.localtime(Course.objects.get(pk=course.pk).closes_at).strftime("%H:%M")
    expect(teacher.locator("#course-state")).to_have_text(f"closed since {since}")
    expect(teacher.get_by_role("button", name="Open it again")).to_be_visible()
    teacher.screenshot(path=ARTIFACTS / "course-closed-overview.png")

    lab = browser.new_context().new_page()
    log_in(lab, live_server.url, trainee)
    lab.goto(f"{live_server.url}/lab/1a/")
    expect(lab.locator(".course-closed")).to_have_text(
        f"Storage course is closed (since {since}): runs no longer count for Storage course."
        " They stay here, in your own lab."
    )
    lab.screenshot(path=ARTIFACTS / "lab-course-closed.png")
