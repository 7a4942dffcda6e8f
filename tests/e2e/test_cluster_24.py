"""A trainee on the dev cluster's two nodes (docker/cluster/), in Debian's
Chromium: 1a on a filesystem over the network (GlusterFS, mounted by both nodes) and
on the job's own $TMPDIR, which exists only on the node while the job runs. What the
pages say of a directory that only the node knew."""

import pytest
from playwright.sync_api import Page, expect

from exercises.catalogue.models import StorageTarget
from tests.e2e.browser import ARTIFACTS, expect_runs_completed, log_in, start_runs
from tests.runs import syncing

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def targets_24(dev_profile) -> tuple[StorageTarget, StorageTarget]:
    """The dev site, but with $TMPDIR as most sites have it: the job's own directory on
    its node (the variable Slurm's prolog sets); and its $WORK, the GlusterFS volume
    every node mounts."""
    tmp = dev_profile.targets.get(key="tmp")
    tmp.path_template, tmp.shared = "$TMPDIR", False
    tmp.save()
    tmp.quota_source.delete()  # a job's $TMPDIR has no usage to collect between jobs
    return tmp, dev_profile.targets.get(key="work")


def test_a_trainee_runs_1a_on_the_network_filesystem_and_the_nodes_tmpdir(
    portal_on_24, live_server, targets_24, cluster24_username, make_user, page: Page
) -> None:
    tmp, work = targets_24
    user = make_user(cluster24_username)
    log_in(page, live_server.url, user)

    with syncing(interval=2):
        page.goto(f"{live_server.url}/lab/1a/")
        start_runs(page, work.name, tmp.name)
        panel = page.locator("#runs-panel")
        expect(panel.get_by_role("status")).to_contain_text("Started 1a on $TMPDIR, $WORK")
        expect_runs_completed(page, 2, timeout_ms=120_000)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / "cluster24-lab-1a.png", full_page=True)

    panel.get_by_role("link", name=tmp.name).first.click()
    expect(page.get_by_role("heading", name="1a on $TMPDIR: Completed")).to_be_visible()
    directory = page.locator("dt:has-text('Directory') + dd")
    expect(directory).to_contain_text("$TMPDIR/storagelab-run-")
    expect(directory).to_contain_text("on the node that ran the job, removed at the end")
    expect(page.locator("#io-absent")).to_contain_text(
        "Runs on a target in memory are not recorded"
    )
    page.screenshot(path=ARTIFACTS / "cluster24-run-tmpdir.png", full_page=True)

    page.go_back()
    page.locator("#runs-panel").get_by_role("link", name=work.name).first.click()
    expect(page.get_by_role("heading", name="1a on $WORK: Completed")).to_be_visible()
    expect(page.locator("dt:has-text('Directory') + dd")).to_contain_text(
        f"/gluster/{cluster24_username}/storagelab-run-"
    )
    # Darshan's log came back from the node that ran the job, and reads as 1a's I/O.
    expect(page.locator("#io-summary")).to_contain_text("the I/O of exercise 1a", timeout=30_000)
    page.screenshot(path=ARTIFACTS / "cluster24-run-work.png", full_page=True)

    page.get_by_role("navigation").get_by_role("link", name="My storage").click()
    expect(page.locator("#storage-tmp")).to_contain_text(
        "Your directory: wherever $TMPDIR points on the node that runs your job"
    )
    expect(page.locator("#storage-tmp")).to_contain_text("only as long as the job, on one node")
    expect(page.locator("#storage-work")).to_contain_text(f"/gluster/{cluster24_username}")
    page.screenshot(path=ARTIFACTS / "cluster24-my-storage.png", full_page=True)
