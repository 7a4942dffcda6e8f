"""Replay my job in Debian's Chromium, on the dev site's seven targets, with real runs:

- fio's 2 GiB stream in 1 MiB writes, on a site whose quiet figures (a calibration of
  1a) put $SCRATCH 4.7× ahead of $GLOBAL while $GLOBAL keeps results: the check's page
  never says the target it recommends is slower without saying why it comes first; a
  double click on "Replay on every target" is one replay; without reloading, every
  target's run is timed for 3 s, and the rules' first choice and the replay's fastest
  are set side by side, with one sentence saying which to believe;
- a job that only read 512 MiB: replayed as reads past the page cache ($GLOBAL's
  device takes 200 MiB/s, and its reads come back at that, not at memory's speed),
  and the page says "read".

Each page at a desk's width and a phone's, checked by axe-core (WCAG 2.2 AA), read
whole on the phone, and kept as screenshots (tests/e2e/artifacts/)."""

import re

import pytest
from playwright.sync_api import Page, expect

from exercises.catalogue.models import MeasuredReference
from jobio.models import Replay
from jobs.models import BenchmarkRun
from tests.e2e.axe import wcag_violations
from tests.e2e.browser import ARTIFACTS, PHONE, log_in, reads_whole_on_a_phone
from tests.jobio.logs import log

DESK = {"width": 1280, "height": 800}


def check_and_replay(page: Page, portal: str, name: str, heading: str) -> None:
    """Upload log `name`, wait for its advice, and replay it on every target (a double
    click: one replay), as a user does."""
    page.goto(f"{portal}/check-my-job/")
    page.get_by_label("Darshan log of the job (.darshan)").set_input_files(log(name))
    page.get_by_role("button", name="Check the log").click()
    expect(page.get_by_role("heading", name=heading)).to_be_visible(timeout=30_000)


def replay_everywhere(page: Page, only: tuple[str, ...] = ()) -> None:
    """Starts the replay with a double click, on every target, or on `only` (their
    names) where a test needs no more: each target's run lasts 3 s and more."""
    if only:
        for box in page.locator("#replay fieldset input[type=checkbox]").all():
            label = box.locator("xpath=..").inner_text().strip()
            box.set_checked(label in only)
    page.locator("#replay").get_by_role("button", name="Replay on every target").dblclick()
    expect(page).to_have_url(re.compile(r"/check-my-job/replays/[0-9a-f-]+/$"))
    expect(page.get_by_role("heading", name="Your job, replayed")).to_be_visible()
    # The page follows the runs by itself, one after another, to the two verdicts.
    expect(page.locator("#replay-verdict")).to_be_visible(timeout=420_000)


def looked_at(page: Page, name: str) -> list[str]:
    """axe-core's findings at a desk's width and a phone's, what a phone cuts, and a
    screenshot of each."""
    found = []
    for width, viewport in (("desk", DESK), ("phone", PHONE)):
        page.set_viewport_size(viewport)
        page.screenshot(path=ARTIFACTS / f"{name}-{width}.png", full_page=True)
        found += [f"{name} at {width}: {v}" for v in wcag_violations(page)]
    found += reads_whole_on_a_phone(page, name)
    page.set_viewport_size(DESK)
    return found


def timed_for(page: Page) -> dict[str, str]:
    """Target key -> its "Timed for" cell, as the page shows it."""
    rows = page.locator("#replay-table tbody tr").all()
    return {row.get_attribute("data-target"): row.locator("td").nth(2).inner_text() for row in rows}


@pytest.mark.django_db(transaction=True)
def test_a_streaming_log_replays_for_3_s_everywhere_beside_a_ranking_that_never_denies_itself(
    live_portal, dev_profile, cluster_username, make_user, settings, sync_loop, page: Page
) -> None:
    settings.REPLAY_SECONDS = 2  # fewer than a figure needs: each run is timed for 3
    for key, median in (("global", 200.0), ("scratch", 940.0)):
        MeasuredReference.objects.create(
            exercise=dev_profile.exercises.get(key="1a"), target=dev_profile.targets.get(key=key),
            values=[median] * 3, median=median, low=median, high=median,
        )  # fmt: skip
    user = make_user(cluster_username)
    ARTIFACTS.mkdir(exist_ok=True)
    log_in(page, live_portal, user)

    check_and_replay(page, live_portal, "sequential-1m", "sequential I/O")
    expect(page.locator(".plan")).to_contain_text("directly on $GLOBAL")
    # The page said "Expect $GLOBAL to be about 4.7x slower than $SCRATCH" beside
    # a plan that recommends $GLOBAL: now the figures' word, and why $GLOBAL is first.
    speedup = page.locator("#speedup")
    expect(speedup).to_contain_text("$SCRATCH is about 4.7× faster than $GLOBAL")
    expect(speedup).to_contain_text("$GLOBAL comes first all the same: $SCRATCH does not keep")
    expect(speedup).not_to_contain_text("slower than")
    page.screenshot(path=ARTIFACTS / "check-my-job-stream.png", full_page=True)
    replay_everywhere(page)

    assert Replay.objects.filter(user=user).count() == 1  # the double click
    assert BenchmarkRun.objects.filter(user=user).count() == 7
    assert set(timed_for(page).values()) == {"3.0 s"}, timed_for(page)
    expect(page.locator("#verdict-rules")).to_contain_text("$GLOBAL")
    expect(page.locator("#verdict-replay")).to_contain_text("measured")
    expect(page.locator("#replay-verdict")).to_contain_text(re.compile(r"^(Both put|Believe the)"))
    # Copies to $GLOBAL counted at its quiet 200 MiB/s, fixed as the replay ended.
    expect(page.locator("#replay-staging")).to_contain_text("$GLOBAL's 200.0 MiB/s")
    page.wait_for_function("Chart.getChart('replay-chart') !== undefined")
    assert looked_at(page, "replay-stream") == []


@pytest.mark.django_db(transaction=True)
def test_a_log_that_only_read_replays_as_reads_past_the_page_cache_and_says_read(
    live_portal, dev_profile, cluster_username, make_user, settings, sync_loop, page: Page
) -> None:
    settings.REPLAY_SECONDS = 3
    ARTIFACTS.mkdir(exist_ok=True)
    log_in(page, live_portal, make_user(cluster_username))

    check_and_replay(page, live_portal, "read-1m", "sequential I/O")
    # A capped disk and memory: every target's reads are bench/test_replay_kinds.py's.
    replay_everywhere(page, only=("$GLOBAL", "$TMPDIR"))

    expect(page.locator("#replay-table thead")).to_contain_text("MiB/s read")
    expect(page.locator("#replay-table thead")).not_to_contain_text("written")
    expect(page.locator("main")).to_contain_text("lays its data out with fio before the clock")
    assert set(timed_for(page).values()) == {"3.0 s"}
    # $GLOBAL's device takes at most 200 MiB/s each way: its reads are the device's.
    read = page.locator('#replay-table tr[data-target="global"] td').nth(1).inner_text()
    assert 0 < float(read.replace(",", "")) <= 260, read
    assert looked_at(page, "replay-read-only") == []
