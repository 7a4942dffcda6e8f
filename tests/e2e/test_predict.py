"""Predict, then measure, in Debian's Chromium on the live cluster: a trainee ranks
1a's four targets before running it, runs it on all four, and the page sets their
guess beside what their runs measured, one sentence per pair they got the wrong way
round. Their prediction is fixed once the first run starts."""

import re

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.browser import ARTIFACTS, log_in

# The guess a trainee who trusts the home directory makes: the slowest first.
GUESS = ["$HOME", "$GLOBAL", "$SCRATCH", "$TMPDIR"]


@pytest.mark.django_db(transaction=True)
def test_a_trainee_predicts_1a_runs_it_and_sees_where_the_guess_missed(
    live_portal, sync_loop, dev_profile, trainee, page: Page
) -> None:
    log_in(page, live_portal, trainee.user)
    page.goto(f"{live_portal}/lab/1a/")

    for place, target in zip(["Fastest", "2nd", "3rd", "Slowest"], GUESS, strict=True):
        page.get_by_label(place, exact=True).select_option(label=target)
    page.get_by_role("button", name="Save my prediction").click()
    saved = page.locator("#predict")
    expect(saved).to_contain_text("Your prediction: $HOME > $GLOBAL > $SCRATCH > $TMPDIR")

    for target in GUESS:
        page.get_by_label(target, exact=True).check()
    page.get_by_role("button", name="Start runs").click()
    panel = page.locator("#runs-panel")
    expect(page.locator("#predict")).to_have_count(0)  # fixed once the runs start
    expect(panel.locator(".status.completed")).to_have_count(4, timeout=120_000)
    expect(panel.get_by_role("heading", name="Your prediction, measured")).to_be_visible()
    expect(panel).to_contain_text("You predicted $HOME > $GLOBAL > $SCRATCH > $TMPDIR")

    # Each sentence names a pair the runs put the other way round, with the two
    # medians of the comparison table beside it.
    medians = {}
    for row in page.locator("table.figures tbody tr").all():
        name = row.locator("th").inner_text()
        figure = row.locator("td").first.inner_text().split()[0].replace(",", "")
        medians[name] = float(figure) if figure != "–" else None
    expected = [
        (a, b) for i, a in enumerate(GUESS) for b in GUESS[i + 1 :] if medians[b] > medians[a]
    ]
    sentences = panel.locator("ul.lesson li.not-shown").all_inner_texts()
    said = [re.match(r"You expected (\S+) to beat (\S+):", s).groups() for s in sentences]
    assert said == expected and expected  # the home directory loses somewhere
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / "predict-then-measure.png", full_page=True)

    # The runs have started: the prediction stays as it was.
    page.reload()
    expect(page.get_by_role("button", name="Save my prediction")).to_have_count(0)
    expect(page.get_by_role("button", name="Change my prediction")).to_have_count(0)
