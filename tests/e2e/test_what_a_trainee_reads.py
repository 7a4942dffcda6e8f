"""What a new trainee reads on the dev site, in Debian's Chromium: 1a's sizes and its
workload line in words, a comparison table without an empty published column, and a
target page with its size and quota each said for what it is, and no repository path."""

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.browser import ARTIFACTS, log_in


@pytest.mark.django_db(transaction=True)
def test_a_new_trainee_reads_1a_and_scratch(live_server, dev_profile, make_user, page: Page):
    log_in(page, live_server.url, make_user("sl-reader1"))

    page.goto(f"{live_server.url}/lab/1a/")
    expect(page.get_by_text("written once, 64 MiB would fit in the page cache")).to_be_visible()
    expect(
        page.get_by_text("direct I/O where the target has a disk, with fsync at the end.")
    ).to_be_visible()
    expect(page.get_by_role("columnheader", name="Site reference (as published)")).to_have_count(0)
    expect(page.locator("#unpublished")).to_have_count(1)
    # No run yet: the empty chart's axis is labelled by decade too.
    ticks = page.wait_for_function(
        "() => { const c = Chart.getChart(document.querySelector('canvas[data-chart]'));"
        " return c && c.scales.y.ticks.map(t => t.label); }"
    ).json_value()
    assert ticks == ["1", "10", "100", "1,000"]
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / "lab-1a-new-trainee.png", full_page=True)

    page.goto(f"{live_server.url}/storage/scratch/")
    expect(
        page.get_by_text("8 GiB in all: the whole filesystem, shared by every account")
    ).to_be_visible()
    expect(
        page.get_by_text("4 GiB per account: the most one account may keep here")
    ).to_be_visible()
    expect(page.get_by_text("storage.sh")).to_have_count(0)
    page.screenshot(path=ARTIFACTS / "target-scratch.png", full_page=True)
