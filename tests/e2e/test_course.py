"""A course in three browsers: an instructor creates it, two trainees join and run
1a on two targets, and the instructor watches the class fill in and exports it."""

import csv
import io
from pathlib import Path

import pytest
from django.contrib.auth.models import Permission
from playwright.sync_api import Browser, Page, expect

from tests.e2e.browser import ARTIFACTS, log_in


@pytest.mark.django_db(transaction=True)
def test_an_instructor_watches_two_trainees_run_a_course(
    live_portal, sync_loop, dev_profile, make_user, make_cluster_username, browser: Browser
) -> None:
    instructor = make_user("sl-instructor")
    instructor.user_permissions.add(Permission.objects.get(codename="teach_course"))
    trainees = [make_user(make_cluster_username()) for _ in range(2)]
    teacher = browser.new_context().new_page()
    log_in(teacher, live_portal, instructor)

    teacher.get_by_role("link", name="Courses").click()
    teacher.get_by_role("link", name="New course").click()
    teacher.get_by_label("Title").fill("Storage 101")
    teacher.get_by_label("1a · Sequential writes, one process").check()
    teacher.get_by_label("$SCRATCH").check()
    teacher.get_by_label("$TMPDIR").check()
    teacher.get_by_role("button", name="Create the course").click()
    code = teacher.locator("code.join-code").inner_text()

    pages = []
    for trainee in trainees:
        page = browser.new_context().new_page()
        log_in(page, live_portal, trainee)
        join_and_run(page, code)
        pages.append(page)

    grid = teacher.locator("#class-grid")
    # Four runs finish; the overview redraws itself, nobody reloads it.
    expect(grid.locator("td.c.done")).to_have_count(4, timeout=90_000)
    for trainee in trainees:
        expect(grid).to_contain_text(trainee.username)
    expect(teacher.get_by_role("heading", name="Participants (2)")).to_be_visible()
    expect(teacher.get_by_text("Nobody has joined yet")).to_be_hidden()
    # Wait for the chart rather than read it once: a redraw may be under way.
    medians = teacher.wait_for_function(
        "() => Chart.getChart(document.querySelector('canvas[data-chart=class-1a]'))"
        '?.data.datasets.find(d => d.label === "Class (each trainee\'s median): median")?.data'
    ).json_value()
    assert len(medians) == 2 and all(m["y"] > 0 for m in medians)
    # The class in one colour on the instructor's page and in the trainee's lab.
    colour = (
        "(id) => Chart.getChart(document.querySelector(`canvas[data-chart=${id}]`))"
        '?.data.datasets.find(d => d.label === "Class (each trainee\'s median)")?.borderColor'
    )
    pages[0].reload()
    lab_colour = pages[0].wait_for_function(colour, arg="comparison-data").json_value()
    assert teacher.evaluate(colour, "class-1a") == lab_colour
    ARTIFACTS.mkdir(exist_ok=True)
    teacher.screenshot(path=ARTIFACTS / "course-overview.png", full_page=True)

    with teacher.expect_download() as download:
        teacher.get_by_role("link", name="CSV").click()
    rows = list(csv.DictReader(io.StringIO(Path(download.value.path()).read_text())))
    assert sorted((r["participant"], r["target"]) for r in rows) == sorted(
        (t.username, target) for t in trainees for target in ("$SCRATCH", "$TMPDIR")
    )
    assert all(r["status"] == "completed" and float(r["write_mib_s"]) > 0 for r in rows)


def join_and_run(page: Page, code: str) -> None:
    page.get_by_role("link", name="Courses").click()
    page.get_by_label("Join a course with the code your instructor gave you").fill(code)
    page.get_by_role("button", name="Join").click()
    expect(page.get_by_text("You joined Storage 101")).to_be_visible()
    page.get_by_role("link", name="1a · Sequential writes, one process").click()
    page.get_by_label("$SCRATCH").check()
    page.get_by_label("$TMPDIR").check()
    page.get_by_role("button", name="Start runs").click()
    expect(page.locator("#runs-panel").get_by_role("status")).to_contain_text("Started 1a")
