"""A storage scan's answer as its job posts it (the secret, the size, a strict shape, once),
and what users and staff then read: My storage's purge preview and largest directories,
the banner, one e-mail per crossing, the staff outlook, the Open OnDemand export."""

import json
import shlex
import subprocess
from pathlib import Path

import pytest
from django.core import mail

from exercises.quotas import notices, ondemand, scanner, scans, treewalk
from exercises.quotas.models import StorageNotice, StorageScan
from tests.quotas import pending_scan, walk

URL = "/storage/scans/{key}/result"


def post(client, scan: StorageScan, body, *, token: str = "scan-secret", exit: str = "0"):
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return client.post(
        URL.format(key=scan.key),
        data=data,
        content_type="application/json",
        headers={"X-Storagelab-Token": token, "X-Scan-Exit": exit},
    )


@pytest.fixture
def scan(ada_account) -> StorageScan:
    return pending_scan(ada_account)


def answered(client, account, *walks: dict) -> StorageScan:
    scan = pending_scan(account)
    assert post(client, scan, {"targets": list(walks)}).status_code == 202
    scan.refresh_from_db()
    assert scan.status == StorageScan.Status.DONE, scan.error
    return scan


# --- the post ----------------------------------------------------------------------------------


def test_the_answer_is_taken_once_and_only_with_the_scans_secret(client, scan, ada_account):
    body = {"targets": [walk(ada_account, "scratch", due_now=2)]}

    assert post(client, scan, body, token="guess").status_code == 403
    assert post(client, scan, body).status_code == 202
    assert post(client, scan, body).status_code == 409

    scan.refresh_from_db()
    assert scan.found["scratch"]["purge"]["due"]["0"]["files"] == 2


def test_a_body_past_the_limit_is_refused_before_it_is_read(client, scan, settings):
    settings.SCAN_RESULT_MAX_BYTES = 1000

    response = post(client, scan, b"x" * 5000)

    assert response.status_code == 413
    scan.refresh_from_db()
    assert scan.status == StorageScan.Status.SUBMITTED  # the job may post a smaller one


@pytest.mark.parametrize(
    "change, said",
    [
        (lambda w: w["dirs"][0].update(path="/etc"), "problem(s) in its shape"),
        (lambda w: w["dirs"][0].update(path="../ada2"), "problem(s) in its shape"),
        (
            lambda w: w["purge"]["files"].append({"path": "a\x00b", "bytes": 1, "due_at": 1}),
            "shape",
        ),
        (lambda w: w.update(bytes=-1), "problem(s) in its shape"),
        (lambda w: w.update(extra="field"), "problem(s) in its shape"),
        (lambda w: w.update(dir="/srv/storagelab/scratch/someone-else"), "is not a target"),
        (lambda w: w.update(key="nosuchtarget"), "is not a target"),
        (lambda w: w["dirs"].extend([w["dirs"][0]] * 300), "problem(s) in its shape"),
        (lambda w: w["purge"]["due"].pop("3"), "problem(s) in its shape"),
    ],
)
def test_a_crafted_answer_fails_the_scan_and_says_why(client, scan, ada_account, change, said):
    crafted = walk(ada_account, "scratch", due_now=1)
    change(crafted)

    assert post(client, scan, {"targets": [crafted]}).status_code == 202

    scan.refresh_from_db()
    assert scan.status == StorageScan.Status.FAILED and scan.found == {}
    assert "its answer could not be read" in scan.error and said in scan.error


def test_a_job_that_failed_says_what_it_said(client, scan):
    post(client, scan, b"python3: command not found\n", exit="127")

    scan.refresh_from_db()
    assert scan.status == StorageScan.Status.FAILED
    assert scan.error == "the scan job failed (exit status 127): python3: command not found"


# --- what people read --------------------------------------------------------------------------


def test_my_storage_shows_what_the_purge_takes_and_what_fills_the_space(
    client, ada_account, settings
):
    answered(
        client,
        ada_account,
        walk(ada_account, "scratch", due_now=3, due_in_days=2),
        walk(ada_account, "home"),
    )
    client.force_login(ada_account.user)

    page = client.get("/storage/").content.decode()

    assert "4 files (7 MiB) fall due within 7 days; 3 of them are due now" in page
    assert "files not accessed for 14 days are removed" in page
    assert "results/old0.dat" in page and "big/later.dat" in page
    assert "move what you need to $GLOBAL" in page  # the first shared, lasting, unpurged
    assert "big/model.bin" in page  # one level deeper
    # The banner: due within 3 days.
    assert "The purge removes 4 files (7 MiB) of yours from $SCRATCH within 3 days" in page
    # $HOME has no purge: only what fills it.
    home = page.split('id="storage-home"')[1].split("</section>")[0]
    assert "What fills it" in home and "What the purge takes" not in home


def test_a_scan_that_stopped_early_says_its_figures_are_partial(client, ada_account):
    stopped = walk(ada_account, "scratch")
    stopped.update(state="stopped", why="it reached 2,000,000 entries", entries=2_000_000)
    answered(client, ada_account, stopped)
    client.force_login(ada_account.user)

    page = client.get("/storage/").content.decode()

    assert "The scan stopped early (it reached 2,000,000 entries)" in page


def test_nobody_sees_another_users_scan(client, ada_account, make_user):
    answered(client, ada_account, walk(ada_account, "scratch", due_now=3))
    other = make_user("bob")
    client.force_login(other)

    page = client.get("/storage/").content.decode()

    assert "results/old0.dat" not in page and "The purge removes" not in page


def test_a_crossing_is_mailed_once_and_again_after_it_ended(client, ada_account, settings):
    settings.STORAGE_NOTICES = True
    user = ada_account.user
    user.email = "ada@example.org"
    user.save()

    answered(client, ada_account, walk(ada_account, "scratch", due_now=2))
    answered(client, ada_account, walk(ada_account, "scratch", due_now=2))
    assert notices.check(user) == 0  # the hourly round: still the same crossing

    assert len(mail.outbox) == 1
    assert mail.outbox[0].to == ["ada@example.org"]
    assert "The purge removes 2 files" in mail.outbox[0].subject
    assert "/storage/" in mail.outbox[0].body

    answered(client, ada_account, walk(ada_account, "scratch"))  # nothing due: over
    assert not StorageNotice.objects.filter(user=user).exists()
    answered(client, ada_account, walk(ada_account, "scratch", due_now=1))
    assert len(mail.outbox) == 2


def test_staff_see_every_users_outlook_and_trainees_do_not(client, ada_account, make_user):
    answered(client, ada_account, walk(ada_account, "scratch", due_now=2))
    client.force_login(make_user(staff=True))

    page = client.get("/storage-outlook/").content.decode()

    assert ada_account.username in page and "the purge takes 2 file(s)" in page
    client.force_login(ada_account.user)
    assert client.get("/storage-outlook/").status_code == 403


def test_the_ondemand_export_carries_the_outlook_beside_its_entries(
    client, ada_account, dev_profile
):
    answered(client, ada_account, walk(ada_account, "scratch", due_now=2))

    exported = ondemand.export(dev_profile)

    (concern,) = exported["storagelab_outlook"]
    assert concern["user"] == ada_account.username and concern["purge_due_files"] == 2
    assert concern["path"].endswith(f"/scratch/{ada_account.username}")
    assert concern["days_to_full"] is None


@pytest.mark.parametrize("kind", ["scan", "purge"])
def test_the_job_script_is_valid_bash_with_every_value_quoted(ada_account, dev_profile, kind):
    scan = pending_scan(ada_account)
    scan.kind = kind
    targets = scans.scannable(list(dev_profile.targets.all()))
    if kind == "purge":
        targets = [t for t in targets if t.purge_days]

    script = scans.render_script(scan, targets)

    checked = subprocess.run(["bash", "-n"], input=script, text=True, capture_output=True)
    assert checked.returncode == 0, checked.stderr
    assert "STORAGELAB_RESULT_TOKEN" in script and "scan-secret" not in script
    # The walk and the scanner whole, between the heredoc's lines, for a scan and a purge.
    assert f"<<'STORAGELAB_PROGRAM'\n{scans.PROGRAM}\nSTORAGELAB_PROGRAM\n" in script
    assert Path(treewalk.__file__).read_text() in script
    assert Path(scanner.__file__).read_text() in script
    if kind == "purge":  # its targets and their policy in the program's one argument
        command = script.split("python3 -I -S - ", 1)[1].split("\n", 1)[0]
        spec = json.loads(shlex.split(command)[0])
        assert spec["kind"] == "purge"
        (target,) = spec["targets"]
        assert target["dir"] == "/srv/storagelab/scratch/sl-ada"
        assert target["purge"] == {"days": 14, "by": "access", "exempt": []}
