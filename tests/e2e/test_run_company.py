"""A run that shared its target, on its page in Debian's Chromium on a phone: the
trainee reads how many runs wrote beside theirs and whose (no names), their figure
against the quiet one of a named calibration round, and the lesson; staff also read
which runs. Both pages read whole at 390 px; screenshots for a person to look at."""

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import Browser, expect

from exercises.calibration.models import Calibration
from exercises.catalogue.models import MeasuredReference, Metric
from jobs.models import RunResult, RunStatus
from tests.e2e.browser import PHONE, log_in, reads_whole_on_a_phone
from tests.runs import make_run


@pytest.mark.django_db(transaction=True)
def test_a_run_that_shared_says_with_what_and_what_it_cost(
    live_server, dev_profile, ada, ada_account, make_user, browser: Browser
) -> None:
    t0 = timezone.now() - timedelta(minutes=30)
    exercise = dev_profile.exercises.get(key="1a")
    scratch = dev_profile.targets.get(key="scratch")
    round_ = Calibration.objects.create(profile=dev_profile, repeat=3, finished_at=t0)
    MeasuredReference.objects.create(
        exercise=exercise, target=scratch, metric=Metric.WRITE, calibration=round_,
        median=996.0, low=990.0, high=998.0, values=[990.0, 996.0, 998.0], measured_at=t0,
    )  # fmt: skip

    def ran(account, start: int, end: int, mib_s: float | None = None):
        run = make_run(
            account, scratch, exercise=exercise, status=RunStatus.COMPLETED,
            started_at=t0 + timedelta(seconds=start), ended_at=t0 + timedelta(seconds=end),
            node_names="c1",
        )  # fmt: skip
        if mib_s:
            RunResult.objects.create(
                run=run, engine="fio", processes=1, write_bytes_per_s=mib_s * 2**20
            )
        return run

    mine = ran(ada_account, 0, 4, mib_s=502.5)
    classmates = [make_user(f"sl-co-{i}").cluster_account for i in range(3)]
    for i, account in enumerate(classmates):
        ran(account, 1 + i, 5)
    cut: list[str] = []

    page = browser.new_context(viewport=PHONE).new_page()
    log_in(page, live_server.url, ada)
    page.goto(f"{live_server.url}/jobs/runs/{mine.key}/")
    said = page.locator("#run-company")
    expect(said).to_contain_text("3 other runs wrote to $SCRATCH while yours ran")
    expect(said).to_contain_text(f"calibration round {round_.pk}")
    expect(said.locator("#shared-lesson")).to_be_visible()
    assert "sl-co-" not in said.inner_text()  # a trainee never reads whose
    cut += reads_whole_on_a_phone(page, "run-company-trainee")

    staff = browser.new_context(viewport=PHONE).new_page()
    log_in(staff, live_server.url, make_user(staff=True))
    staff.goto(f"{live_server.url}/jobs/runs/{mine.key}/")
    expect(staff.locator("#companions tbody tr")).to_have_count(3)
    cut += reads_whole_on_a_phone(staff, "run-company-staff")
    assert not cut, "\n".join(cut)
