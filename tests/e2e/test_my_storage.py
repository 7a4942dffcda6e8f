"""A user checks "My storage" in Debian's Chromium: figures the local collector counted
in real directories of the dev cluster, a target past 80% (bar and banner), a target
whose collector is missing (unknown, never zero), the way to that target's guidance,
the last days and the forecast, and a real scan: what the purge takes and what fills."""

import os
import re
import subprocess
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect

from exercises.quotas.collectors import collect_all
from exercises.quotas.store import record_usage
from exercises.quotas.usage import Usage
from portal.units import GiB, MiB
from tests.conftest import DISK_ROOT
from tests.e2e.browser import ARTIFACTS, PHONE, log_in
from tests.quotas import dev_target


@pytest.mark.django_db(transaction=True)
def test_a_user_sees_a_bar_per_target_and_follows_the_guidance_link(
    live_server, dev_profile, make_cluster_username, make_user, page: Page
) -> None:
    account = make_user(make_cluster_username()).cluster_account
    # $HOME gets a small quota so a few MiB pass 80% (writing gigabytes would too, slowly).
    dev_profile.targets.filter(key="home").update(quota_bytes=4 * MiB)
    home = Path(DISK_ROOT / "home" / account.username)
    (home / "results.dat").write_bytes(os.urandom(3 * MiB + MiB // 2))
    (DISK_ROOT / "global" / account.username / "input.dat").write_bytes(os.urandom(MiB))
    scratch = dev_profile.targets.get(key="scratch").quota_source
    scratch.collector, scratch.filesystem = "lustre", "/lustre/scratch"  # no lfs here
    scratch.save()
    collect_all(dev_profile, [account])

    log_in(page, live_server.url, account.user)
    banner = page.locator("aside.quota-banner")
    expect(banner).to_contain_text(re.compile(r"\$HOME is 8\d% full"))  # 3.5 MiB + /etc/skel
    page.get_by_role("navigation").get_by_role("link", name="My storage").click()

    expect(page.get_by_role("heading", name="My storage", level=1)).to_be_visible()
    meters = page.get_by_role("meter")
    # $HOME, $GLOBAL, $BINFS, $TMPDIR, $PROJECT: space has a limit on each ($SCRATCH's
    # is unknown, $WORK has none).
    expect(meters).to_have_count(5)
    expect(page.get_by_role("meter", name="Space used on $HOME")).to_have_attribute(
        "class", "bar level-warning"
    )
    expect(page.locator("#storage-global")).to_contain_text("1 MiB of 10 GiB (<1%)")
    expect(page.locator("#storage-scratch")).to_contain_text(
        "Usage unknown, never collected. The last try"
    )
    expect(page.locator("#storage-scratch")).to_contain_text("lfs is not installed on")
    expect(page.locator("#storage-tmp")).to_contain_text(
        "each run's directory is removed when its job ends"
    )
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / "my-storage.png", full_page=True)

    page.get_by_role("link", name="Guidance for $SCRATCH").click()

    expect(
        page.get_by_role("heading", name="$SCRATCH (ext4, no journal, nobarrier (dev))", level=1)
    ).to_be_visible()
    expect(page.get_by_text("Use it for")).to_be_visible()
    assert page.url.endswith("/storage/scratch/")


@pytest.mark.django_db(transaction=True)
def test_a_user_sees_the_last_days_and_when_a_growing_target_fills(
    live_server, dev_profile, make_user, page: Page
) -> None:
    """Ten days of history as the quota rounds kept it: $SCRATCH grows about 1 GiB a
    day with a spike on one day, against a 20 GiB quota; $GLOBAL holds still."""
    account = make_user("sl-outlook").cluster_account
    growth = [3, 4, 5.2, 6, 13, 8, 9.1, 10, 11, 12, 13.2]  # GiB, one a day; day 4 a spike
    for day, gib in zip(range(10, -1, -1), growth, strict=True):
        at = timezone.now() - timedelta(days=day)
        record_usage(
            account,
            dev_target("scratch"),
            "local",
            Usage(bytes_used=int(gib * GiB), bytes_hard=20 * GiB),
            collected_at=at,
        )
        record_usage(account, dev_target("global"), "local",
                     Usage(bytes_used=2 * GiB, bytes_hard=50 * GiB), collected_at=at)  # fmt: skip

    log_in(page, live_server.url, account.user)
    banner = page.locator("aside.quota-banner")
    expect(banner).to_contain_text(re.compile(r"\$SCRATCH fills in about [67] days"))
    page.goto(f"{live_server.url}/storage/")
    scratch = page.locator("#storage-scratch")
    expect(scratch.locator(".forecast")).to_contain_text(
        re.compile(r"Space fills in about [67] days \(\d+–\d+\), around .*\+1 GiB a day")
    )
    expect(page.locator("#storage-global .forecast")).to_contain_text("has not grown")
    page.wait_for_function("Chart.getChart('history-scratch') && Chart.getChart('history-global')")
    page.screenshot(path=ARTIFACTS / "my-storage-forecast.png", full_page=True)


@pytest.mark.django_db(transaction=True)
def test_a_user_scans_and_reads_what_the_purge_takes_and_what_fills_the_space(
    live_portal, dev_profile, make_cluster_username, make_user, browser, page: Page
) -> None:
    """A real scan, in the browser: the user clicks "Scan my storage", the page follows
    the job and shows, beside the forecast, what $SCRATCH's purge takes (files last read
    20 days ago) and which directories fill the space; then the same on a phone."""
    account = make_user(make_cluster_username()).cluster_account
    name = account.username
    scratch = DISK_ROOT / "scratch" / name
    old = time.time() - 20 * 86400
    for run in ("run-0412", "run-0413"):
        for i in range(3):
            path = scratch / "results" / run / f"step{i}.h5"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(os.urandom((i + 1) * MiB))
            os.utime(path, (old, old))
    (scratch / "checkpoints").mkdir()
    for i in range(40):
        (scratch / "checkpoints" / f"ckpt-{i:03}.pt").write_bytes(os.urandom(64 * 1024))
    subprocess.run(["chown", "-R", f"{name}:", str(scratch)], check=True)
    for day, gib in zip(
        range(8, -1, -1), [0.5, 0.9, 1.1, 1.5, 1.8, 2.1, 2.4, 2.7, 3.0], strict=True
    ):
        record_usage(
            account,
            dev_target("scratch"),
            "local",
            Usage(bytes_used=int(gib * GiB), bytes_hard=4 * GiB, files_used=50),
            collected_at=timezone.now() - timedelta(days=day),
        )

    log_in(page, live_portal, account.user)
    page.goto(f"{live_portal}/storage/")
    expect(page.locator("#scan")).to_contain_text("Your storage has not been scanned yet")
    page.get_by_role("button", name="Scan my storage").click()

    found = page.locator("#storage-scratch .scan-found")
    expect(found).to_contain_text(
        "6 files (12 MiB) fall due within 7 days; 6 of them are due now", timeout=60_000
    )
    expect(page.locator("aside.quota-banner")).to_contain_text(
        "The purge removes 6 files (12 MiB) of yours from $SCRATCH within 3 days"
    )
    expect(page.locator("#storage-scratch .forecast")).to_contain_text("Space fills in about")
    found.get_by_text("oldest and largest files due within 7 days").click()
    expect(found.locator("table.due-files")).to_contain_text("results/run-0412/step2.h5")
    largest = found.locator("table.largest")
    expect(largest.locator("tr").nth(1)).to_contain_text("results/")
    deeper = largest.get_by_text("results/run-0413", exact=True)
    expect(deeper).to_be_hidden()
    largest.get_by_text("results/", exact=True).click()
    expect(deeper).to_be_visible()
    expect(found).to_contain_text("Most files: checkpoints/, 40 files")
    page.wait_for_function("Chart.getChart('history-scratch')")
    page.screenshot(path=ARTIFACTS / "my-storage-scan.png", full_page=True)
    page.locator("#storage-scratch").screenshot(path=ARTIFACTS / "my-storage-scan-scratch.png")

    phone = browser.new_context(viewport=PHONE).new_page()
    log_in(phone, live_portal, account.user)
    phone.goto(f"{live_portal}/storage/#storage-scratch")
    on_phone = phone.locator("#storage-scratch")
    expect(on_phone).to_contain_text("What the purge takes")
    width = phone.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the page is {width} px wide on a {PHONE['width']} px phone"
    phone.wait_for_function("Chart.getChart('history-scratch')")
    on_phone.screenshot(path=ARTIFACTS / "phone-my-storage-scan.png")
