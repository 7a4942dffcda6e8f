"""The storage's weather where people read it, in Debian's Chromium on a phone (390 px):
My storage with a day of readings (one target slow now), a run page with the reading
nearest its run, the advisor's answer saying which target is slow now, and the staff's
week as a heatmap. Each reads whole; screenshots for a person to look at."""

from datetime import timedelta

import pytest
from playwright.sync_api import Browser, expect

from exercises.weather.models import Kind
from tests.e2e.browser import PHONE, ask_the_advisor, log_in, reads_whole_on_a_phone
from tests.exercises.weather.weather import reading
from tests.runs import make_run

USUAL = {
    "home": 20.0,
    "global": 200.0,
    "scratch": 1000.0,
    "binfs": 400.0,
    "tmp": 3600.0,
    "work": 320.0,
}


@pytest.mark.django_db(transaction=True)
def test_the_weather_reads_whole_on_a_phone(
    live_server, dev_profile, ada, ada_account, make_user, browser: Browser
) -> None:
    canary = make_user("sl-weather").cluster_account
    for hours in range(0, 24, 2):  # a day, every two hours, $GLOBAL busy since noon
        for key, usual in USUAL.items():
            busy = key == "global" and hours < 4
            figure = usual * (0.35 if busy else 0.97)
            reading(canary, dev_profile, key, figure, usual, ago=timedelta(hours=hours, minutes=5))
            reading(
                canary, dev_profile, key, 900.0, 1000.0, kind=Kind.METADATA,
                ago=timedelta(hours=hours, minutes=6),
            )  # fmt: skip
    global_ = dev_profile.targets.get(key="global")
    run = make_run(ada_account, global_, status="completed", started_at=reading(
        canary, dev_profile, "global", 70.0, 200.0, ago=timedelta(minutes=1)
    ).taken_at)  # fmt: skip
    cut: list[str] = []

    page = browser.new_context(viewport=PHONE).new_page()
    log_in(page, live_server.url, ada)
    page.goto(f"{live_server.url}/storage/")
    expect(page.locator("#weather")).to_contain_text("Slow now: streaming write: 35 % of its usual")
    cut += reads_whole_on_a_phone(page, "weather-my-storage")
    page.goto(f"{live_server.url}/jobs/runs/{run.key}/")
    expect(page.locator("#run-weather")).to_contain_text("While this ran, $GLOBAL read 35 %")
    cut += reads_whole_on_a_phone(page, "weather-run")
    page.goto(f"{live_server.url}/lab/")
    ask_the_advisor(page, data_gib="10", node_gib="64", app_gib="4")
    expect(page.locator("#advice .slow-now").first).to_contain_text("$GLOBAL is slow now")
    cut += reads_whole_on_a_phone(page, "weather-advisor")

    staff = make_user(staff=True)
    admin = browser.new_context(viewport=PHONE).new_page()
    log_in(admin, live_server.url, staff)
    admin.goto(f"{live_server.url}/weather/")
    expect(admin.locator("table.heatmap")).to_contain_text("35 %")
    cut += reads_whole_on_a_phone(admin, "weather-heatmap")
    assert not cut, "\n".join(cut)
