"""Replay my job in Debian's Chromium, on the dev site: a user uploads fio's random
4 KiB writes (tests/jobio/logs/), double-clicks "Replay on every target", and reads,
without reloading, the measured time of their job's I/O on each of the seven targets,
the chart of it, and where the measurement stands against Check my job's rules."""

import re

import pytest
from playwright.sync_api import Page, expect

from jobio.models import Replay
from jobs.models import BenchmarkRun
from tests.e2e.browser import ARTIFACTS, log_in
from tests.jobio.logs import log


@pytest.mark.django_db(transaction=True)
def test_a_user_replays_a_log_on_every_target_and_reads_their_jobs_time_on_each(
    live_portal, dev_profile, cluster_username, make_user, settings, sync_loop, page: Page
) -> None:
    settings.REPLAY_SECONDS = 2
    user = make_user(cluster_username)
    log_in(page, live_portal, user)
    page.goto(f"{live_portal}/check-my-job/")
    page.get_by_label("Darshan log of the job (.darshan)").set_input_files(log("random-4k"))
    page.get_by_role("button", name="Check the log").click()
    expect(page.get_by_role("heading", name="random I/O")).to_be_visible(timeout=30_000)
    replay = page.locator("#replay")
    for target in dev_profile.targets.all():
        expect(replay.get_by_label(target.name)).to_be_checked()

    ARTIFACTS.mkdir(exist_ok=True)
    replay.screenshot(path=ARTIFACTS / "replay-my-job-form.png")

    # A double click is one replay: the second click finds the first one's.
    replay.get_by_role("button", name="Replay on every target").dblclick()
    expect(page).to_have_url(re.compile(r"/check-my-job/replays/[0-9a-f-]+/$"))
    expect(page.get_by_role("heading", name="Your job, replayed")).to_be_visible()
    rows = page.locator("#replay-table tbody tr")
    expect(rows).to_have_count(7)

    # The page follows the runs by itself: a measured time on every target.
    verdict = page.locator("#replay-verdict")
    expect(verdict).to_be_visible(timeout=240_000)
    for row in rows.all():
        expect(row.locator("td").nth(3)).to_have_text(re.compile(r"\d"))  # job's I/O time
    expect(page.locator(".plan")).to_contain_text("Measured: your job's I/O takes least on")
    page.wait_for_function("Chart.getChart('replay-chart') !== undefined")
    assert Replay.objects.filter(user=user).count() == 1
    assert BenchmarkRun.objects.filter(user=user).count() == 7
    page.screenshot(path=ARTIFACTS / "replay-my-job.png", full_page=True)
    # $GLOBAL's seeks against memory: the job's 64 MiB take far longer there.
    times = {
        row.get_attribute("data-target"): row.locator("td").nth(3).inner_text()
        for row in rows.all()
    }
    assert times["global"] != times["tmp"]
