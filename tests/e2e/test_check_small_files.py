"""Check my job on a log of many small files, in Debian's Chromium on the dev site: the
page says "many small files", ranks by exercise 3's figures, and draws the two charts
the job has figures for, no empty "order of requests" beside the table; and its
replay on every target, each run timed for 3 s or more within the bound of files."""

import pytest
from playwright.sync_api import Page, expect

from exercises.catalogue.models import MeasuredReference, Metric
from exercises.lab.start import start_exercise_run
from jobio.models import Replay
from tests.e2e.browser import ARTIFACTS, log_in
from tests.e2e.test_check_my_job import upload
from tests.e2e.test_replay_my_job import check_and_replay, looked_at, replay_everywhere, timed_for
from tests.jobio.logs import log
from tests.jobio.test_small_files_check import measure
from tests.runs import follow


@pytest.mark.django_db(transaction=True)
def test_a_log_of_many_small_files_reads_as_one(
    live_portal, dev_profile, make_user, page: Page
) -> None:
    measure(dev_profile, "3", {"tmp": 310.0, "global": 3.1, "scratch": 41.0, "home": 0.4})
    # The streaming figure of $GLOBAL, where the results are copied back to from memory:
    # the rules count that copy in $TMPDIR's time, and need its figure to.
    measure(dev_profile, "1a", {"global": 200.0, "scratch": 940.0})
    log_in(page, live_portal, make_user())
    page.get_by_role("navigation").get_by_role("link", name="Check my job").click()

    upload(page, log("small-files"))

    expect(page.get_by_role("heading", name="many small files")).to_be_visible(timeout=30_000)
    expect(page.locator("#ranking > li").first).to_contain_text("Exercise 3: 310")
    expect(page.locator("#resembles")).to_contain_text("It resembles exercise 3 · Many small files")
    page.wait_for_function("['sizes', 'bytes'].every(id => Chart.getChart('jobio-' + id))")
    expect(page.get_by_text("Order of requests")).to_have_count(0)
    expect(page.locator("#io-table")).to_contain_text("no order to judge")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / "check-my-job-small-files.png", full_page=True)


@pytest.mark.django_db(transaction=True)
def test_a_small_files_log_replays_for_3_s_on_each_target_within_the_bound_of_files(
    live_portal, dev_profile, cluster_username, make_user, settings, sync_loop, page: Page
) -> None:
    """Each target's rounds of mdtest are sized by exercise 6's creates measured there
    just before, as a calibration round measures them: none lasts "0.0 s" any more,
    and no more than REPLAY_MAX_FILES files are made at once."""
    settings.REPLAY_SECONDS = 3
    user = make_user(cluster_username)
    six = dev_profile.exercises.get(key="6")
    # The slowest to make files ($HOME: sync), a disk, and memory, whose rounds are made
    # again and again; every target's are bench/test_replay_kinds.py's.
    names = ("$HOME", "$GLOBAL", "$TMPDIR")
    targets = list(dev_profile.targets.filter(name__in=names).order_by("order"))
    for run in follow(*[start_exercise_run(user.cluster_account, six, t) for t in targets]):
        creates = run.result.create_ops_s
        MeasuredReference.objects.create(
            exercise=six, target=run.target, metric=Metric.CREATE,
            values=[creates], median=creates, low=creates, high=creates,
        )  # fmt: skip
    ARTIFACTS.mkdir(exist_ok=True)
    log_in(page, live_portal, user)

    check_and_replay(page, live_portal, "small-files", "many small files")
    replay_everywhere(page, only=names)

    for key, timed in timed_for(page).items():
        assert float(timed.removesuffix(" s")) >= 3, (key, timed)
    expect(page.locator("#replay-table")).not_to_contain_text("too short to rank")
    page.locator("#replay-sized summary").click()
    expect(page.locator("#replay-sized")).to_contain_text("$TMPDIR: ")
    expect(page.locator("#replay-sized")).to_contain_text("times over")
    replay = Replay.objects.get(user=user)
    for run in replay.runs.all():
        made = run.workload_params
        assert made.files_per_process * made.processes <= settings.REPLAY_MAX_FILES
    assert looked_at(page, "replay-small-files") == []
