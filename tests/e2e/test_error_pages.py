"""What a trainee reads in Chromium when a page is not there or not theirs: the
portal's own page, styled, in plain words, with where to go, on a desk and on a phone;
and a run page whose run went away keeps its panel when its poll is answered 404.
Screenshots of the 404, 403 and 405 pages for a person to look at."""

import pytest
from playwright.sync_api import Browser, Page, expect

from jobs.models import BenchmarkRun
from tests.e2e.browser import ARTIFACTS, log_in
from tests.runs import make_run

DESK = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
# Python's names and Django's texts, which no page shows.
NEVER = ("BenchmarkRun", "Resolver404", "Http404", "matches the given query", "Traceback")


def reads_as_the_portal(page: Page, heading: str, said: str, shot: str) -> None:
    expect(page.get_by_role("heading", name=heading)).to_be_visible()
    expect(page.get_by_role("alert")).to_contain_text(said)
    expect(page.locator("header.topbar")).to_be_visible()
    expect(page.get_by_role("link", name="The lab", exact=True)).to_be_visible()
    expect(page.get_by_role("link", name="My storage", exact=True).last).to_be_visible()
    text = page.locator("body").inner_text()
    for word in NEVER:
        assert word not in text, word
    # Styled: the card of the portal's stylesheet, and nothing wider than the screen.
    assert page.locator("section.card").evaluate("e => getComputedStyle(e).borderRadius") == "8px"
    assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / f"error-{shot}.png", full_page=True)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("size", ["desk", "phone"])
def test_a_trainee_reads_the_portals_own_pages_for_404_403_and_405(
    live_server, dev_profile, make_user, browser: Browser, size
) -> None:
    ada = make_user("sl-e2e-ada")
    other = make_user("sl-e2e-other")
    theirs = make_run(other.cluster_account, dev_profile.targets.get(key="scratch"))
    page = browser.new_context(viewport=DESK if size == "desk" else PHONE).new_page()
    log_in(page, live_server.url, ada)

    answer = page.goto(f"{live_server.url}/lab/no-such-exercise/really/")
    assert answer.status == 404
    reads_as_the_portal(page, "Page not found", "There is no page at this address", f"404-{size}")

    answer = page.goto(f"{live_server.url}/jobs/runs/{theirs.key}/")
    assert answer.status == 404
    reads_as_the_portal(
        page, "Page not found", "No run of yours has this address", f"404-run-{size}"
    )

    answer = page.goto(f"{live_server.url}/lab/calibration/")
    assert answer.status == 403
    reads_as_the_portal(
        page,
        "This is not open to you",
        "Only instructors and staff see the site's calibration.",
        f"403-{size}",
    )

    answer = page.goto(f"{live_server.url}/jobs/runs/{theirs.key}/cancel")
    assert answer.status == 405 and answer.headers["allow"] == "POST"
    reads_as_the_portal(page, "This address is not a page", "where a button sends", f"405-{size}")

    page.get_by_role("link", name="The lab", exact=True).click()
    expect(page.get_by_role("heading", name="Storage lab")).to_be_visible()


@pytest.mark.django_db(transaction=True)
def test_a_run_page_whose_run_goes_away_keeps_its_panel(
    live_server, dev_profile, make_user, page: Page
) -> None:
    """Its poll is answered 404 with a short fragment, which htmx does not swap in:
    no second page inside the first."""
    ada = make_user("sl-e2e-ada2")
    run = make_run(ada.cluster_account, dev_profile.targets.get(key="scratch"))
    log_in(page, live_server.url, ada)
    page.goto(f"{live_server.url}/jobs/runs/{run.key}/")
    expect(page.locator("#run-status")).to_be_visible()

    BenchmarkRun.objects.filter(pk=run.pk).delete()
    polled = page.wait_for_event(  # the next poll, within 2 s
        "response", lambda r: r.url.endswith(f"/runs/{run.key}/") and r.status == 404
    )
    assert polled.text().startswith('<p class="message error"')

    page.wait_for_timeout(500)  # the swap htmx would have made
    expect(page.locator("header.topbar")).to_have_count(1)
    expect(page.locator("#run-status")).to_be_visible()
    expect(page.get_by_role("heading", name="Page not found")).to_have_count(0)
