"""The comparison chart's log axis, in Debian's Chromium: a labelled tick at every
decade its dots use, written as people write numbers (10, 100, 1,000), and no legend
entry for a series with no figure."""

import pytest
from playwright.sync_api import Page

from tests.courses import add_run, make_course, make_instructor
from tests.e2e.browser import ARTIFACTS, log_in

# The drawn chart's y ticks as labelled and its legend's entries.
AXIS = """() => {
    const canvas = document.querySelector('canvas[data-chart]');
    const chart = canvas && Chart.getChart(canvas);
    return chart && {
        ticks: chart.scales.y.ticks.map(t => t.label),
        legend: chart.legend.legendItems.map(i => i.text),
    };
}"""


@pytest.mark.django_db(transaction=True)
def test_home_at_20_mib_s_has_its_decade_labelled_10_and_100(
    live_server, dev_profile, make_user, page: Page
) -> None:
    instructor = make_instructor(make_user)
    trainee = make_user("sl-axes1")
    course = make_course(dev_profile, instructor, "Axes")
    course.targets.add(dev_profile.targets.get(key="home"))
    add_run(trainee.cluster_account, course, "1a", "home", 20.4)
    add_run(trainee.cluster_account, course, "1a", "tmp", 3120.0)
    log_in(page, live_server.url, trainee)

    page.goto(f"{live_server.url}/lab/1a/")
    drawn = page.wait_for_function(AXIS).json_value()

    assert drawn["ticks"] == ["10", "100", "1,000", "10,000"]
    assert "Site reference (published)" not in drawn["legend"]  # the dev site has none
    assert "My runs" in drawn["legend"]
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator(".chart").first.screenshot(path=ARTIFACTS / "lab-1a-log-axis.png")

    log_in_as = page.context.browser.new_context().new_page()
    log_in(log_in_as, live_server.url, instructor)
    log_in_as.goto(f"{live_server.url}/courses/{course.pk}/overview?exercise=1a")
    overview = log_in_as.wait_for_function(AXIS).json_value()
    assert overview["ticks"] == ["10", "100", "1,000", "10,000"]
    log_in_as.screenshot(path=ARTIFACTS / "overview-log-axis.png", full_page=True)
