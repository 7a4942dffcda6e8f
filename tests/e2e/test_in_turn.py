"""A trainee's runs in turn, on a phone, in Debian's Chromium against the live portal:
"Start runs" with four targets ticked lists the four at once, says of those that
wait why they wait, and asks before a second click starts them again; each of those
panels reads whole at 390 px."""

import pytest
from playwright.sync_api import Browser, expect

from tests.e2e.browser import PHONE, expect_runs_completed, log_in, reads_whole_on_a_phone

TARGETS = ("$HOME", "$GLOBAL", "$SCRATCH", "$TMPDIR")


@pytest.mark.django_db(transaction=True)
def test_four_targets_run_in_turn_and_the_phone_says_why_they_wait(
    live_portal, sync_loop, dev_profile, trainee_account, browser: Browser
) -> None:
    page = browser.new_context(viewport=PHONE).new_page()
    log_in(page, live_portal, trainee_account.user)
    page.goto(f"{live_portal}/lab/1a/")
    for name in TARGETS:
        page.get_by_label(name, exact=True).check()
    button = page.get_by_role("button", name="Start runs")
    panel = page.locator("#runs-panel")
    cut: list[str] = []

    button.click()
    expect(panel.locator("tbody tr[data-run]")).to_have_count(4)
    expect(panel.locator(".in-turn").first).to_have_text(
        "starts when your run before it ends", timeout=15_000
    )
    cut += reads_whole_on_a_phone(page, "lab-in-turn")

    button.click()  # again, within seconds: it asks, and starts nothing
    expect(panel.get_by_role("status")).to_contain_text("Start them once more?")
    expect(panel.get_by_role("button", name="Start once more")).to_be_visible()
    cut += reads_whole_on_a_phone(page, "lab-start-again")

    expect_runs_completed(page, 4, timeout_ms=60_000)
    expect(panel.locator(".in-turn")).to_have_count(0)
    cut += reads_whole_on_a_phone(page, "lab-in-turn-done")
    assert not cut, "\n".join(cut)
