"""The advisor's answer as a new user reads it in Chromium, at a desk and on a phone:
issue 57's question (one 1 GiB file, written in sequence, kept) on the dev site with
its calibration's figures. The headline names $GLOBAL and its time; every target says
what the job's I/O would take there and the quiet figure it is counted at, with the
calibration round and its date. The page passes axe-core's WCAG 2.2 AA rules."""

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect

from exercises.calibration.models import Calibration
from exercises.catalogue.models import MeasuredReference, Metric
from tests.e2e.axe import wcag_violations
from tests.e2e.browser import ARTIFACTS, PHONE, log_in, reads_whole_on_a_phone

pytestmark = pytest.mark.django_db(transaction=True)

# The dev site's calibration medians (issue 57): 1a and 2a in MiB/s, 6 in creates/s.
QUIET = {
    ("1a", Metric.WRITE): {
        "home": 20.0, "global": 197.0, "scratch": 996.0, "binfs": 399.0, "tmp": 9576.0,
        "work": 80.0, "project": 93.0,
    },
    ("2a", Metric.WRITE): {
        "home": 13.1, "global": 0.9, "scratch": 7.8, "binfs": 60.0, "tmp": 1800.0,
    },
    ("6", Metric.CREATE): {"home": 1293.0, "global": 320.0, "tmp": 20000.0},
}  # fmt: skip


@pytest.fixture
def calibrated(dev_profile) -> Calibration:
    done = Calibration.objects.create(
        profile=dev_profile, repeat=3, exercise_keys=["1a", "2a", "6"], finished_at=timezone.now()
    )
    for (exercise, metric), medians in QUIET.items():
        for target, median in medians.items():
            MeasuredReference.objects.create(
                exercise=dev_profile.exercises.get(key=exercise),
                target=dev_profile.targets.get(key=target),
                metric=metric,
                calibration=done,
                values=[median * 0.98, median, median * 1.01],
                median=median,
                low=median * 0.98,
                high=median * 1.01,
            )
    return done


def ask_for_one_gib_file(page: Page) -> None:
    page.get_by_role("link", name="Which target?").click()
    page.get_by_label("How does the job read and write?").select_option("sequential")
    page.get_by_label("Its files are").select_option("few_large")
    page.get_by_label("About how many files?").fill("1")
    page.get_by_label("How much data does it read or write (GiB)?").fill("1")
    page.get_by_role("button", name="Advise me").click()


def test_the_answer_names_global_and_every_targets_time_and_figure(
    live_server, calibrated, make_user, page: Page
) -> None:
    log_in(page, live_server.url, make_user())

    ask_for_one_gib_file(page)

    plan = page.locator("#advice .plan")
    expect(plan).to_contain_text(
        "Read and write the data directly on $GLOBAL, in large blocks: about 5.2 s of I/O "
        "there (1 GiB at 197.0 MiB/s)"
    )
    expect(plan).not_to_contain_text("speed hardly matters")
    ranking = page.locator("#advice ol.ranking > li")
    expect(ranking.first).to_contain_text("$GLOBAL")
    home = page.locator('#advice li[data-target="home"]')
    expect(home).to_contain_text("(no room left)")
    expect(home.locator(".io-time")).to_have_text(
        "This job's I/O here: about 51 s: 1 GiB at 20.0 MiB/s."
    )
    # The calibration's median, with its round and date: not a run that shared $HOME.
    expect(home.locator(".figure-sources")).to_have_text(
        f"$HOME's sequential writes, 20.0 MiB/s: exercise 1a, measured here by calibration "
        f"round {calibrated.pk} on {calibrated.measured.first().measured_at:%-d %B %Y}: the "
        "median of 3 runs, 19.6–20.2 MiB/s."
    )
    expect(ranking).to_have_count(calibrated.profile.targets.count())
    for item in ranking.all():
        expect(item.locator(".io-time")).to_contain_text("This job's I/O here: ")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / "advisor-costs-desk.png", full_page=True)
    assert wcag_violations(page) == []


def test_the_answer_reads_whole_on_a_phone(live_server, calibrated, make_user, browser) -> None:
    page = browser.new_context(viewport=PHONE).new_page()
    log_in(page, live_server.url, make_user())

    ask_for_one_gib_file(page)

    expect(page.locator('#advice li[data-target="global"] .io-time')).to_be_visible()
    assert reads_whole_on_a_phone(page, "advisor-costs") == []
    assert wcag_violations(page) == []
