"""The portal on a phone (390 × 844): the header fits, no page is wider than the
screen, and a table wider than its card scrolls inside it. Screenshots of the lab,
a run, My storage and the course overview, for a person to look at."""

import pytest
from django.contrib.auth.models import Permission
from playwright.sync_api import Browser

from exercises.courses.models import Course, Enrollment
from jobs.models import BenchmarkRun
from portal.units import GiB
from tests.e2e.browser import ARTIFACTS, log_in
from tests.quotas import fill
from tests.runs import make_runs

PHONE = {"width": 390, "height": 844}


def looks_right_on_a_phone(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / f"phone-{name}.png", full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], name
    log_out = page.get_by_role("button", name="Log out").bounding_box()
    assert log_out["x"] + log_out["width"] <= PHONE["width"], name  # on the screen


@pytest.mark.django_db(transaction=True)
def test_the_pages_a_class_uses_fit_a_phone(
    live_server, dev_profile, ada, ada_account, make_user, browser: Browser
) -> None:
    make_runs(ada, dev_profile, 8)  # 1a, twice on every target, with figures
    fill(ada_account, "scratch", 3 * GiB, bytes_hard=10 * GiB)
    instructor = make_user("sl-phone-inst")
    instructor.user_permissions.add(Permission.objects.get(codename="teach_course"))
    course = Course.objects.create(title="Storage 101", profile=dev_profile)
    course.instructors.add(instructor)
    course.exercises.set(dev_profile.exercises.all())
    course.targets.set(dev_profile.targets.all())
    Enrollment.objects.create(course=course, user=ada)
    BenchmarkRun.objects.filter(user=ada).update(course=course)
    run = BenchmarkRun.objects.filter(user=ada).first()

    trainee = browser.new_context(viewport=PHONE).new_page()
    log_in(trainee, live_server.url, ada)
    for name, path in (
        ("lab", "/lab/1a/"),
        ("run", f"/jobs/runs/{run.key}/"),
        ("storage", "/storage/"),
    ):
        trainee.goto(live_server.url + path)
        looks_right_on_a_phone(trainee, name)

    teacher = browser.new_context(viewport=PHONE).new_page()
    log_in(teacher, live_server.url, instructor)
    teacher.goto(f"{live_server.url}/courses/{course.pk}/overview")
    looks_right_on_a_phone(teacher, "course-overview")
    # The grid is wider than the phone: it scrolls inside its card, the page does not.
    grid = teacher.locator("table#class-grid")
    assert grid.evaluate("t => t.scrollWidth > t.clientWidth")
