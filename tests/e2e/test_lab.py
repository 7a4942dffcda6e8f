"""A trainee's journey through the lab, in Debian's Chromium, on the live cluster."""

import re

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect

from exercises.catalogue.models import ReferenceResult
from jobs.models import BenchmarkRun, RunStatus
from tests.e2e.browser import (
    ARTIFACTS,
    ask_the_advisor,
    expect_runs_completed,
    log_in,
    start_runs,
)
from tests.runs import make_run


@pytest.mark.django_db(transaction=True)
def test_a_trainee_runs_1a_on_two_targets_and_compares(
    live_portal, sync_loop, dev_profile, trainee_account, page: Page
) -> None:
    exercise = dev_profile.exercises.get(key="1a")
    scratch = dev_profile.targets.get(key="scratch")
    tmp = dev_profile.targets.get(key="tmp")
    ReferenceResult.objects.create(exercise=exercise, target=tmp, value=1234.5)
    log_in(page, live_portal, trainee_account.user)

    page.get_by_role("link", name="Lab", exact=True).click()
    page.get_by_role("link", name=re.compile(r"^1a · ")).click()
    start_runs(page, scratch.name, tmp.name)

    panel = page.locator("#runs-panel")
    expect(panel.get_by_role("status")).to_contain_text("Started 1a on $SCRATCH, $TMPDIR")
    expect_runs_completed(page, 2, timeout_ms=60_000)
    chart = page.wait_for_function(
        """() => {
            const c = Chart.getChart(document.querySelector('canvas[data-chart]'));
            const data = document.getElementById('comparison-data').textContent;
            const labels = JSON.parse(data).labels;
            return c && {labels, sets: c.data.datasets.map(d => [d.label, d.data])};
        }"""
    ).json_value()
    sets = dict(chart["sets"])

    def by_target(label: str) -> dict[str, float]:
        return {chart["labels"][round(p["x"])]: p["y"] for p in sets[label]}

    mine = by_target("My runs: median")
    assert mine[scratch.name] > 0 and mine[tmp.name] > 0
    assert len(sets["My runs"]) == 2  # a dot per run
    assert by_target("Site reference (published)") == {tmp.name: 1234.5}
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / "lab-1a-compared.png", full_page=True)

    panel.get_by_role("link", name=tmp.name).first.click()
    expect(page.get_by_role("heading", name="1a on $TMPDIR: Completed")).to_be_visible()
    expect(page.get_by_text("The job script")).to_be_visible()
    page.screenshot(path=ARTIFACTS / "run-detail.png", full_page=True)


@pytest.mark.django_db(transaction=True)
def test_the_advisor_stages_heavy_random_io_into_tmpdir(live_server, settings, make_user, page):
    from django.core.management import call_command

    call_command("load_site_profile", "vsc3", stdout=open("/dev/null", "w"))  # noqa: SIM115
    settings.SITE_PROFILE = "vsc3"
    log_in(page, live_server.url, make_user())

    ask_the_advisor(page, data_gib="10", node_gib="64", app_gib="32")

    advice = page.locator("#advice")
    expect(advice.locator("ol.ranking > li").first).to_contain_text("$TMPDIR")
    expect(advice.locator(".plan")).to_contain_text("$TMPDIR")
    expect(advice.locator(".plan")).to_contain_text("back to $GLOBAL")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / "advisor-10gb-32gb.png", full_page=True)


def is_poll(response) -> bool:
    return response.request.method == "GET" and "hx-request" in response.request.headers


@pytest.mark.django_db(transaction=True)
def test_a_poll_that_brings_nothing_new_leaves_the_runs_panel_as_it_is(
    live_server, dev_profile, trainee_account, page: Page
) -> None:
    """The panel names its version (portal/polling.py): its very first poll gets a 304,
    which must not blank it, and the next change still comes in. No sync runs here:
    the run stays as it was saved until the test moves it."""
    run = make_run(
        trainee_account,
        dev_profile.targets.get(key="scratch"),
        exercise=dev_profile.exercises.get(key="1a"),
        status=RunStatus.RUNNING,
        slurm_job_id=4242,
    )
    log_in(page, live_server.url, trainee_account.user)
    page.goto(f"{live_server.url}/lab/1a/")
    panel = page.locator("#runs-panel")
    expect(panel.locator(".status.running")).to_have_count(1)

    for _ in range(2):
        with page.expect_response(is_poll) as poll:
            pass
        assert poll.value.status == 304
    expect(panel.locator(".status.running")).to_have_count(1)
    expect(panel.get_by_role("heading", name="Your runs")).to_be_visible()

    BenchmarkRun.objects.filter(pk=run.pk).update(
        status=RunStatus.FAILED, updated_at=timezone.now()
    )
    expect(panel.locator(".status.failed")).to_have_count(1, timeout=10_000)
