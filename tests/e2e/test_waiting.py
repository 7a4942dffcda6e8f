"""Runs beyond the cap, in Debian's Chromium on the live cluster: a trainee allowed
2 runs at once repeats 1a ×3 on two targets in one click; the page says 4 wait, shows
each one's place in line, and follows all six to their figures without a reload."""

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.browser import ARTIFACTS, log_in


@pytest.mark.django_db(transaction=True)
def test_a_trainee_repeats_1a_beyond_the_cap_and_the_waiting_runs_start_by_themselves(
    live_portal, sync_loop, dev_profile, trainee_account, page: Page, settings
) -> None:
    settings.MAX_ACTIVE_RUNS_PER_USER = 2
    log_in(page, live_portal, trainee_account.user)
    page.goto(f"{live_portal}/lab/1a/")

    page.get_by_label("$SCRATCH").check()
    page.get_by_label("$TMPDIR").check()
    page.get_by_label("×3").check()
    page.get_by_role("button", name="Start runs").click()

    panel = page.locator("#runs-panel")
    expect(panel.get_by_role("status")).to_have_text(
        "Started 1a on $SCRATCH, $TMPDIR; 4 more wait for a free slot and start by "
        "themselves as your runs finish."
    )
    expect(panel.locator("tbody tr[data-run]")).to_have_count(6)
    expect(panel.get_by_text("next to start")).to_be_visible()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / "lab-runs-waiting.png", full_page=True)

    # The waiting runs start by themselves while the page polls; nobody reloads it.
    expect(panel.locator(".status.completed")).to_have_count(6, timeout=90_000)
    expect(panel.locator(".status.waiting")).to_have_count(0)
    page.screenshot(path=ARTIFACTS / "lab-runs-waited-and-done.png", full_page=True)
