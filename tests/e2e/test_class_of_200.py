"""An instructor runs a class of 200 (seeded: tests/courses.py) in a browser: picks
an exercise, finds the three stuck trainees in "Needs help", resets one (asked
first) and undoes it, closes and reopens the course, projects the discussion and
steps to the next exercise. Screenshots on a desktop and on a phone."""

import re

import pytest
from django.contrib.auth.models import Permission
from django.utils import timezone
from playwright.sync_api import Browser, Page, expect

from exercises.courses.models import Course, Enrollment
from jobs.models import BenchmarkRun, RunStatus
from tests.courses import seed_class
from tests.e2e.browser import ARTIFACTS, PHONE, log_in
from tests.in_turn import FOUR_TARGETS

DESKTOP = {"width": 1280, "height": 900}


def shot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / f"class-of-200-{name}.png", full_page=True)


@pytest.mark.django_db(transaction=True)
def test_an_instructor_runs_a_class_of_200(
    live_server, dev_profile, make_user, browser: Browser
) -> None:
    instructor = make_user("sl-class200-inst")
    instructor.user_permissions.add(Permission.objects.get(codename="teach_course"))
    course = Course.objects.create(title="Storage 200", profile=dev_profile)
    course.instructors.add(instructor)
    course.exercises.set(dev_profile.exercises.filter(key__in=["1a", "1b", "2a"]))
    course.targets.set(dev_profile.targets.filter(key__in=FOUR_TARGETS))  # the lab's four
    seeded = seed_class(course, 200, f"c200-{course.pk}")
    stuck = {kind: seeded[kind].username for kind in ("failed", "waiting", "idle")}
    teacher = browser.new_context(viewport=DESKTOP).new_page()
    log_in(teacher, live_server.url, instructor)

    # The overview of a class this size opens on one exercise, the one the class is
    # on (1a: one trainee has not started it); the instructor picks 2a.
    teacher.get_by_role("link", name="Courses").click()
    teacher.get_by_role("link", name="Storage 200").click()
    counts = teacher.locator("#class-counts")
    expect(counts.get_by_role("link", name=re.compile("^1a ·"))).to_have_attribute(
        "aria-current", "page"
    )
    # It opens short: the counts, who needs help and the grid's first rows.
    shot(teacher, "overview-opens")
    height = teacher.evaluate("document.documentElement.scrollHeight")
    assert height < 3000, f"the overview opens {height} px tall"
    counts.get_by_role("link", name=re.compile("^2a ·")).click()
    expect(teacher.get_by_role("heading", name="Participants (200): 2a")).to_be_visible()
    expect(teacher.locator("#grid-rows tr")).to_have_count(200)
    expect(teacher.locator("#grid-rows tr:visible")).to_have_count(15)
    teacher.get_by_label("Show every participant").check()
    expect(teacher.locator("#grid-rows tr:visible")).to_have_count(200)
    # 197 done, and each of the three stuck in a state of their own.
    chosen = counts.locator("tr.chosen td")
    expect(chosen).to_have_text(["197", "0", "1", "1", "0", "1"])
    shot(teacher, "overview")

    # "Needs help" names exactly the three stuck trainees.
    help_box = teacher.locator("#needs-help")
    expect(help_box.get_by_role("link")).to_have_text(
        [stuck["failed"], stuck["waiting"], stuck["idle"]]
    )
    # The failed count shows their row alone in the grid.
    chosen.nth(3).get_by_role("button").click()
    expect(teacher.locator("#grid-rows tr:visible")).to_have_count(1)
    expect(teacher.locator("#grid-rows tr:visible th")).to_contain_text(stuck["failed"])
    expect(teacher.locator("#grid-hidden")).to_have_text("1 of 200 shown (filtered).")
    teacher.locator("section", has=teacher.locator("#class-grid")).screenshot(
        path=ARTIFACTS / "class-of-200-grid.png"
    )

    # Reset the failed trainee: asked first, then undone.
    help_box.get_by_role("link", name=stuck["failed"]).click()
    expect(teacher.get_by_role("heading", name=stuck["failed"])).to_be_visible()
    expect(teacher.get_by_role("cell", name="fio: No space left on device")).to_have_count(3)
    shot(teacher, "participant")
    teacher.get_by_role("button", name="Reset…").click()
    expect(teacher.get_by_role("heading", name=f"Reset {stuck['failed']}'s runs")).to_be_visible()
    shot(teacher, "reset-confirm")
    teacher.get_by_role("button", name=f"Reset {stuck['failed']}'s runs").click()
    expect(teacher.get_by_role("status").first).to_contain_text("12 run(s) left the course")
    runs_of_failed = BenchmarkRun.objects.filter(user=seeded["failed"])
    assert not runs_of_failed.filter(course=course).exists()
    # Reset, they have no run in the course: listed now as without a run since joining.
    expect(teacher.locator("#needs-help")).to_contain_text("A run failed (0)")
    expect(teacher.locator("#needs-help").get_by_role("link")).to_have_text(
        [stuck["waiting"], stuck["failed"], stuck["idle"]]
    )
    teacher.get_by_role("button", name="Undo").click()
    expect(teacher.get_by_role("status").first).to_contain_text("12 run(s) are back")
    assert runs_of_failed.filter(course=course).count() == 12
    expect(teacher.locator("#needs-help").get_by_role("link")).to_have_count(3)

    # Close the course (its figures stay), then open it again.
    teacher.get_by_role("button", name="Close the course").click()
    teacher.get_by_role("button", name="Close Storage 200").click()  # it asks first
    expect(teacher.get_by_role("status").first).to_contain_text("Storage 200 is closed")
    expect(teacher.locator("#grid-rows tr")).to_have_count(200)
    teacher.get_by_role("button", name="Open it again").click()
    expect(teacher.get_by_role("status").first).to_contain_text("Storage 200 is open again")
    # Back on the exercise the instructor chose, not on the first one.
    expect(counts.get_by_role("link", name=re.compile("^2a ·"))).to_have_attribute(
        "aria-current", "page"
    )

    # The open page follows the class by itself: a trainee's runs start, one joins.
    BenchmarkRun.objects.filter(user=seeded["waiting"], exercise__key="2a").update(
        status=RunStatus.RUNNING, updated_at=timezone.now()
    )
    newcomer = make_user("sl-class200-new")
    Enrollment.objects.create(course=course, user=newcomer)
    row = teacher.locator(f"#p-{seeded['waiting'].pk}")
    expect(row.locator("td.c.running")).to_have_count(4)
    expect(teacher.locator("#grid-rows tr")).to_have_count(201)
    expect(teacher.locator("#grid-rows tr").last).to_contain_text(newcomer.username)
    expect(teacher.locator("#class-counts tr.chosen td")).to_have_text(
        ["197", "1", "0", "1", "0", "2"]
    )

    # Project 2a's discussion in large type, then step to the next exercise.
    teacher.get_by_role("link", name="2a", exact=True).click()
    teacher.get_by_role("link", name="Large type").click()
    expect(teacher.locator("body")).to_have_class("projector")
    expect(teacher.locator("#discussion-figures table.figures tbody tr")).to_have_count(4)
    shot(teacher, "discussion-large")
    teacher.get_by_role("link", name="← 1b").click()
    expect(teacher.get_by_role("heading", name=re.compile("^1b ·"))).to_be_visible()
    teacher.keyboard.press("ArrowRight")
    expect(teacher.get_by_role("heading", name=re.compile("^2a ·"))).to_be_visible()
    expect(teacher.locator("body")).to_have_class("projector")  # large type kept

    phone = browser.new_context(viewport=PHONE).new_page()
    log_in(phone, live_server.url, instructor)
    for name, path in (
        ("phone-overview", f"/courses/{course.pk}/overview"),
        ("phone-discussion", f"/courses/{course.pk}/discussion/1a"),
    ):
        phone.goto(live_server.url + path)
        shot(phone, name)
        assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], name
