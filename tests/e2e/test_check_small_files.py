"""Check my job on a log of many small files, in Debian's Chromium on the dev site: the
page says "many small files", ranks by exercise 3's figures, and draws the two charts
the job has figures for, no empty "order of requests" beside the table."""

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.browser import ARTIFACTS, log_in
from tests.e2e.test_check_my_job import upload
from tests.jobio.logs import log
from tests.jobio.test_small_files_check import measure


@pytest.mark.django_db(transaction=True)
def test_a_log_of_many_small_files_reads_as_one(
    live_portal, dev_profile, make_user, page: Page
) -> None:
    measure(dev_profile, "3", {"tmp": 310.0, "global": 3.1, "scratch": 41.0, "home": 0.4})
    log_in(page, live_portal, make_user())
    page.get_by_role("navigation").get_by_role("link", name="Check my job").click()

    upload(page, log("small-files"))

    expect(page.get_by_role("heading", name="many small files")).to_be_visible(timeout=30_000)
    expect(page.locator("#ranking > li").first).to_contain_text("Exercise 3: 310")
    expect(page.locator("#resembles")).to_contain_text("It resembles exercise 3 · Many small files")
    page.wait_for_function("['sizes', 'bytes'].every(id => Chart.getChart('jobio-' + id))")
    expect(page.get_by_text("Order of requests")).to_have_count(0)
    expect(page.locator("#io-table")).to_contain_text("no order to judge")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / "check-my-job-small-files.png", full_page=True)
