"""Every main page passes axe-core's WCAG 2.2 AA rules (tests/e2e/axe.py) in Chromium,
at a phone's width (390 px) and a desk's (1280 px), with something on it: a trainee's
pages (the lab with her runs of 1a, a target, a run, the advisor's answer, Check my
job, My storage with a banner, her course, a page that is not there), an instructor's
(the prediction forms, the overview of a class of 50, a participant, the course's
form, the projector's view), the staff's (the weather, the calibration, the storage
outlook) and the login page. Each page is loaded once and checked at both widths
(nothing of the portal's changes with the width but its stylesheet); a failure names
every element, its rule, its page and its width, with a screenshot of the page. No
run reaches the cluster."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import Permission
from django.utils import timezone
from playwright.sync_api import Browser, Page, expect

from exercises.calibration.models import Calibration
from exercises.catalogue.models import MeasuredReference
from exercises.courses.models import Enrollment
from jobs.models import BenchmarkRun
from portal.units import GiB
from tests.courses import make_course, seed_class
from tests.e2e.axe import wcag_violations
from tests.e2e.browser import ARTIFACTS, PHONE, ask_the_advisor, log_in
from tests.exercises.weather.weather import reading
from tests.names import unique_name
from tests.quotas import fill
from tests.runs import make_runs

DESK = {"width": 1280, "height": 800}
WIDTHS = {"phone": PHONE, "desk": DESK}


def violations_at_both_widths(page: Page, name: str) -> list[str]:
    """The page as it stands, checked at each width: every violation as a line naming
    the page and the width (and a screenshot of the page there, for a person to look
    at)."""
    found = []
    for width, viewport in WIDTHS.items():
        page.set_viewport_size(viewport)
        if violations := wcag_violations(page):
            page.screenshot(path=ARTIFACTS / f"axe-{name}-{width}.png", full_page=True)
            found += [f"{name} at {viewport['width']} px: {v}" for v in violations]
    return found


def visit(page: Page, url: str, name: str, status: int = 200) -> list[str]:
    answer = page.goto(url)
    assert answer.status == status, f"{name}: {url} answered {answer.status}"
    return violations_at_both_widths(page, name)


@pytest.mark.django_db(transaction=True)
def test_every_main_page_passes_wcag_22_aa_on_a_phone_and_at_a_desk(
    live_server, dev_profile, ada, ada_account, make_user, browser: Browser
) -> None:
    make_runs(ada_account, dev_profile, 4, keys=["scratch", "tmp"])  # 1a, twice on each
    fill(ada_account, "home", int(0.85 * GiB), bytes_hard=GiB)  # the banner on every page
    fill(ada_account, "scratch", 3 * GiB, bytes_hard=10 * GiB)
    instructor = make_user(unique_name("sl-axe-teacher"))
    instructor.user_permissions.add(Permission.objects.get(codename="teach_course"))
    course = make_course(dev_profile, instructor, "Storage 101")
    seed_class(course, 50, unique_name("axe"))  # three stuck: failed, waiting, idle
    course.exercises.set(dev_profile.exercises.all())  # a line per exercise, a column
    course.targets.set(dev_profile.targets.all())  # per target: as a real course shows
    Enrollment.objects.create(course=course, user=ada)
    BenchmarkRun.objects.filter(user=ada).update(course=course)
    run = BenchmarkRun.objects.filter(user=ada, target__key="scratch").first()
    staff = make_user(staff=True)
    _weather(make_user("sl-weather").cluster_account, dev_profile)
    _calibrated(dev_profile, staff)
    ARTIFACTS.mkdir(exist_ok=True)
    url = live_server.url
    found: list[str] = []

    visitor = browser.new_page()
    found += visit(visitor, f"{url}/login/", "login")

    trainee = browser.new_page()
    log_in(trainee, url, ada)
    for name, path in (
        ("home", "/"),
        ("lab", "/lab/"),
        ("exercise", "/lab/1a/"),  # her four runs, their chart, the class's figures
        ("target", "/storage/scratch/"),
        ("run", f"/jobs/runs/{run.key}/"),
        ("check-my-job", "/check-my-job/"),
        ("my-storage", "/storage/"),
        ("courses", "/courses/"),
        ("course", f"/courses/{course.pk}/"),
        ("advisor", "/advisor/"),
    ):
        found += visit(trainee, url + path, name)
    found += visit(trainee, f"{url}/lab/no-such-exercise/", "error-404", status=404)
    ask_the_advisor(trainee, data_gib="10", node_gib="64", app_gib="32")
    expect(trainee.locator("#advice ol.ranking > li").first).to_be_visible()
    found += violations_at_both_widths(trainee, "advisor-answer")

    teacher = browser.new_page()
    log_in(teacher, url, instructor)
    # Without a run of 1a yet: the prediction form first, two selects per target.
    found += visit(teacher, f"{url}/lab/1a/", "exercise-predict")
    expect(teacher.locator("#predict select")).to_have_count(2 * dev_profile.targets.count())
    # 8b's form also asks how it will do against 8a (faster, about as fast, slower).
    found += visit(teacher, f"{url}/lab/8b/", "exercise-predict-against")
    expect(teacher.locator("#against select")).not_to_have_count(0)
    for name, path in (
        ("courses-teaching", "/courses/"),
        ("course-overview", f"/courses/{course.pk}/overview"),
        ("participant", f"/courses/{course.pk}/participants/{ada.pk}/"),
        ("course-edit", f"/courses/{course.pk}/edit"),
        ("projector", f"/courses/{course.pk}/discussion/1a?view=large"),
    ):
        found += visit(teacher, url + path, name)

    admin = browser.new_page()
    log_in(admin, url, staff)
    for name, path in (
        ("weather", "/weather/"),
        ("calibration", "/lab/calibration/"),
        ("outlook", "/storage-outlook/"),
    ):
        found += visit(admin, url + path, name)

    assert not found, "\n".join(found)


def _weather(canary, profile) -> None:
    """A day of readings every three hours on three targets, $GLOBAL slow since noon."""
    for hours in range(0, 24, 3):
        for key, usual in (("home", 20.0), ("global", 200.0), ("scratch", 1000.0)):
            slow = key == "global" and hours < 6
            reading(canary, profile, key, usual * (0.35 if slow else 0.97), usual,
                    ago=timedelta(hours=hours, minutes=5))  # fmt: skip


def _calibrated(profile, staff) -> None:
    """A finished round of 1a on every target, with its figures."""
    ended = timezone.now() - timedelta(hours=1)
    targets = list(profile.targets.all())
    done = Calibration.objects.create(
        profile=profile, started_by=staff, repeat=3, exercise_keys=["1a"],
        target_keys=[t.key for t in targets], started_at=ended - timedelta(minutes=20),
        finished_at=ended,
        summary=f"Plan: exercises 1a; targets {', '.join(t.key for t in targets)}; ×3.",
    )  # fmt: skip
    exercise = profile.exercises.get(key="1a")
    for i, target in enumerate(targets):
        low, median, high = 100.0 * (i + 1), 115.0 * (i + 1), 130.0 * (i + 1)
        MeasuredReference.objects.create(
            calibration=done, exercise=exercise, target=target, values=[low, median, high],
            median=median, low=low, high=high, measured_at=ended,
        )  # fmt: skip
