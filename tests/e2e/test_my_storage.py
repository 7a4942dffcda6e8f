"""A user checks "My storage" in Debian's Chromium: figures the local collector counted
in real directories of the dev cluster, a target past 80% (bar and banner), a target
whose collector is missing (unknown, never zero), and the way to that target's guidance."""

import os
import re
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
from tests.e2e.browser import ARTIFACTS, log_in
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
    # $HOME, $GLOBAL, $BINFS, $TMPDIR: space has a limit on each ($SCRATCH's is
    # unknown, $WORK has none).
    expect(meters).to_have_count(4)
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
