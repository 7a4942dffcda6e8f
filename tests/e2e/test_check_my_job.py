"""A user checks a job from its Darshan log in Debian's Chromium: uploads fio's random
4 KiB writes (tests/jobio/logs/), watches the page follow the read, sees the job's I/O
charts and the ranking, and follows the link to exercise 2a with the recommended
targets ticked. VSC-3's profile, as the issue asks; the log is read by a real Celery
worker in the sandbox."""

import io

import pytest
from django.core.management import call_command
from playwright.sync_api import Page, expect

from tests.e2e.browser import ARTIFACTS, log_in
from tests.jobio.logs import log, not_a_log, partial


@pytest.fixture
def vsc3_site(db, settings) -> None:
    call_command("load_site_profile", "vsc3", stdout=io.StringIO())
    settings.SITE_PROFILE = "vsc3"


def upload(page: Page, path) -> None:
    page.get_by_label("Darshan log of the job (.darshan)").set_input_files(path)
    page.get_by_role("button", name="Check the log").click()


@pytest.mark.django_db(transaction=True)
def test_a_user_uploads_a_log_sees_the_advice_and_runs_the_resembling_exercise(
    live_portal, vsc3_site, make_user, page: Page
) -> None:
    user = make_user()
    log_in(page, live_portal, user)
    page.get_by_role("navigation").get_by_role("link", name="Check my job").click()
    expect(page.get_by_role("heading", name="Check my job", level=1)).to_be_visible()

    upload(page, log("random-4k"))

    # The worker reads it while the page polls; nobody reloads.
    expect(page.get_by_role("heading", name="random I/O")).to_be_visible(timeout=30_000)
    expect(page.locator("#resembles")).to_contain_text(
        "like 2a: 16,384 writes of 4 KiB at random offsets, one process, one file"
    )
    ranking = page.locator("#ranking > li")
    expect(ranking).to_have_count(5)
    expect(ranking.first).to_contain_text("$TMPDIR")
    expect(page.locator(".plan")).to_contain_text("Write in $TMPDIR while the job runs")
    expect(page.locator("#speedup")).to_contain_text("about 25× faster than $GLOBAL")
    expect(page.locator("#sizes-table")).to_contain_text("1–10 KiB")
    # Chart.js drew the three charts the finished check swapped in.
    page.wait_for_function(
        "['sizes', 'access', 'bytes'].every(id => Chart.getChart('jobio-' + id))"
    )
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / "check-my-job-random-4k.png", full_page=True)

    page.get_by_role("link", name="Run 2a on $TMPDIR and $GLOBAL").click()
    expect(page.get_by_role("heading", name="Random 4 KiB writes, one process")).to_be_visible()
    expect(page.get_by_label("$TMPDIR", exact=True)).to_be_checked()
    expect(page.get_by_label("$GLOBAL", exact=True)).to_be_checked()
    expect(page.get_by_label("$HOME", exact=True)).not_to_be_checked()
    page.screenshot(path=ARTIFACTS / "check-my-job-to-2a.png", full_page=True)


@pytest.mark.django_db(transaction=True)
def test_a_file_that_is_no_log_gets_its_reason_and_leaves_nothing(
    live_portal, vsc3_site, make_user, page: Page, tmp_path
) -> None:
    from jobio.models import JobCheck  # noqa: PLC0415

    log_in(page, live_portal, make_user())
    page.goto(f"{live_portal}/check-my-job/")
    upload(page, not_a_log(tmp_path))
    expect(page.get_by_role("alert")).to_contain_text("This is not a Darshan log", timeout=30_000)
    expect(page.get_by_text("Nothing of this log was kept")).to_be_visible()
    assert not JobCheck.objects.exists()
    page.screenshot(path=ARTIFACTS / "check-my-job-not-a-log.png", full_page=True)


@pytest.mark.django_db(transaction=True)
def test_a_partial_log_is_flagged_above_its_advice(
    live_portal, vsc3_site, make_user, page: Page, tmp_path
) -> None:
    log_in(page, live_portal, make_user())
    page.goto(f"{live_portal}/check-my-job/")
    upload(page, partial(tmp_path))

    warning = page.locator("#partial")
    expect(warning).to_be_visible(timeout=30_000)
    expect(warning).to_contain_text("This log is partial.")
    # Above the plan, where it is read first.
    assert page.locator("#partial, .plan").first.get_attribute("id") == "partial"
    expect(page.locator("#io-table")).to_contain_text("15.6 MiB in 1000 writes")
    expect(page.locator("#io-table")).to_contain_text("of the job's run time")
    page.screenshot(path=ARTIFACTS / "check-my-job-partial.png", full_page=True)
