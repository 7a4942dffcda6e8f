"""One start is one start, in Debian's Chromium against the live portal: a double
click on "Start runs", and two clicks 300 ms apart, start the runs once. The second
click comes after the first one's answer (the portal answers in tens of ms) and asks
first; "Start once more" then starts them again, on purpose."""

import pytest
from playwright.sync_api import Page, expect

from jobs.models import BenchmarkRun
from tests.e2e.browser import ARTIFACTS, log_in


def started(user) -> int:
    return BenchmarkRun.objects.filter(user=user).count()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("clicks", ["double click", "two clicks 300 ms apart"])
def test_a_double_click_starts_the_runs_once_and_asks_before_more(
    live_portal, sync_loop, dev_profile, trainee_account, page: Page, clicks: str
) -> None:
    user = trainee_account.user
    log_in(page, live_portal, user)
    page.goto(f"{live_portal}/lab/1a/")
    page.get_by_label("$SCRATCH").check()
    page.get_by_label("$TMPDIR").check()
    button = page.get_by_role("button", name="Start runs")
    panel = page.locator("#runs-panel")

    if clicks == "double click":
        button.dblclick()
    else:
        button.click()
        page.wait_for_timeout(300)
        button.click()

    # A double click's second click may come while the first is on its way (the button
    # is off then) or after its answer (then it asks); two clicks 300 ms apart on this
    # fast server always come after it. Either way: the runs of one start, and no more.
    status = panel.get_by_role("status")
    question = (
        "You started 1a on $SCRATCH, $TMPDIR a moment ago: those runs are listed below, "
        "and this click started nothing. Start them once more?"
    )
    if clicks == "double click":
        expect(status).to_contain_text("1a on $SCRATCH, $TMPDIR")
    else:
        expect(status).to_have_text(question)
    page.wait_for_timeout(1_000)  # a second start would have landed by now
    expect(panel.locator("tbody tr[data-run]")).to_have_count(2)
    assert started(user) == 2
    ARTIFACTS.mkdir(exist_ok=True)
    name = clicks.replace(" ", "-")
    page.screenshot(path=ARTIFACTS / f"lab-one-start-{name}.png", full_page=True)

    if clicks == "double click" and "once more" not in status.inner_text():
        return  # the second click fell on the button while it was off
    panel.get_by_role("button", name="Start once more").click()
    expect(panel.get_by_role("status")).to_contain_text("Started 1a on $SCRATCH, $TMPDIR")
    expect(panel.locator("tbody tr[data-run]")).to_have_count(4)
    assert started(user) == 4
