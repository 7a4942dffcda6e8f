"""The Content-Security-Policy blocks nothing of the portal's own (portal/csp.py): in
Debian's Chromium, the login page, the lab with its chart and a runs panel that
redraws itself, My storage with its bars, Check my job and a course's overview with
its charts and grid log no CSP violation and no console error."""

import pytest
from django.contrib.auth.models import Permission
from django.utils import timezone
from playwright.sync_api import Browser, Page, expect

from jobs.models import BenchmarkRun, RunResult, RunStatus
from portal.units import GiB, MiB
from tests.courses import make_course, seed_class
from tests.e2e.browser import ARTIFACTS, log_in
from tests.names import unique_name
from tests.quotas import fill
from tests.runs import make_run

# Every document the page loads reports each CSP violation to the test.
REPORT_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", (e) =>
  window.reportViolation(`${e.violatedDirective} blocked ${e.blockedURI || "inline"}` +
                         ` at ${e.sourceFile}:${e.lineNumber}`));
"""


def watch(page: Page) -> list[str]:
    """What the page complains of: CSP violations, console errors and warnings, and
    uncaught exceptions, each as a line naming the page it happened on."""
    complaints: list[str] = []
    page.expose_function("reportViolation", lambda text: complaints.append(f"{page.url}: {text}"))
    page.add_init_script(REPORT_VIOLATIONS)
    page.on(
        "console",
        lambda m: m.type in ("error", "warning") and complaints.append(f"{page.url}: {m.text}"),
    )
    page.on("pageerror", lambda e: complaints.append(f"{page.url}: {e}"))
    return complaints


def chart_drawn(page: Page, chart: str) -> None:
    page.wait_for_function(
        "(id) => Chart.getChart(document.querySelector(`canvas[data-chart='${id}']`))", arg=chart
    )


@pytest.mark.django_db(transaction=True)
def test_a_trainees_pages_block_nothing(live_server, dev_profile, make_user, page: Page) -> None:
    ada = make_user(unique_name("sl-ada"), password="Ada-pass-1")
    account = ada.cluster_account
    exercise = dev_profile.exercises.get(key="1a")
    scratch, tmp = dev_profile.targets.get(key="scratch"), dev_profile.targets.get(key="tmp")
    done = make_run(account, tmp, exercise=exercise, status=RunStatus.COMPLETED)
    RunResult.objects.create(run=done, engine="fio", processes=1, write_bytes_per_s=900 * MiB)
    running = make_run(
        account, scratch, exercise=exercise, status=RunStatus.RUNNING, slurm_job_id=4242
    )
    fill(account, "home", int(0.85 * GiB), bytes_hard=GiB)
    fill(account, "scratch", 2 * GiB, bytes_hard=10 * GiB)
    complaints = watch(page)

    page.goto(f"{live_server.url}/login/")
    expect(page.get_by_role("heading", name="Log in")).to_be_visible()
    log_in(page, live_server.url, ada, "Ada-pass-1")

    page.goto(f"{live_server.url}/lab/1a/")
    chart_drawn(page, "comparison-data")
    panel = page.locator("#runs-panel")
    expect(panel.locator(".status.running")).to_have_count(1)
    # The run ends: the panel's poll brings it in and htmx swaps it in place.
    BenchmarkRun.objects.filter(pk=running.pk).update(
        status=RunStatus.FAILED, updated_at=timezone.now()
    )
    expect(panel.locator(".status.failed")).to_have_count(1, timeout=10_000)

    page.get_by_role("navigation").get_by_role("link", name="My storage").click()
    home = page.get_by_role("meter", name="Space used on $HOME")
    expect(home).to_have_attribute("class", "bar level-warning")
    # The bar is drawn to its length without a style attribute: 85% of its track.
    filled = home.evaluate(
        "(bar) => bar.querySelector('rect').getBoundingClientRect().width"
        " / bar.getBoundingClientRect().width"
    )
    assert filled == pytest.approx(0.85, abs=0.01)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / "csp-my-storage.png", full_page=True)

    page.get_by_role("navigation").get_by_role("link", name="Check my job").click()
    expect(page.get_by_role("heading", name="Check my job", level=1)).to_be_visible()

    assert complaints == []


@pytest.mark.django_db(transaction=True)
def test_an_instructors_overview_blocks_nothing(
    live_server, dev_profile, make_user, browser: Browser
) -> None:
    instructor = make_user(unique_name("sl-teacher"))
    instructor.user_permissions.add(Permission.objects.get(codename="teach_course"))
    course = make_course(dev_profile, instructor, unique_name("Storage 101"))
    seed_class(course, 50, unique_name("csp"))  # three of them stuck: 7, 42, idle
    page = browser.new_context().new_page()
    complaints = watch(page)
    log_in(page, live_server.url, instructor)

    page.goto(f"{live_server.url}/courses/{course.pk}/overview")
    chart_drawn(page, "class-1a")
    expect(page.locator("#grid-rows tr")).to_have_count(50)
    # Its poll (every 3 s) comes and goes under the policy too.
    with page.expect_response(lambda r: "hx-request" in r.request.headers, timeout=10_000):
        pass
    page.screenshot(path=ARTIFACTS / "csp-overview.png", full_page=True)

    assert complaints == []
