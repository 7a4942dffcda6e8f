"""Check my job: uploads and the site's log directory, read by the task, seen by
their owner and staff only; bad logs leave nothing behind."""

import re
import shutil
from datetime import date
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from jobio.models import JobCheck
from tests.jobio.logs import crafted_header, log, not_a_log, truncated

pytestmark = pytest.mark.django_db


def upload(client, path: Path, name: str = "job.darshan"):
    data = SimpleUploadedFile(name, path.read_bytes(), "application/octet-stream")
    return client.post(reverse("jobio:upload"), {"log": data})


@pytest.fixture
def ada(make_user):
    return make_user()


def test_an_upload_is_read_and_shows_the_profile_and_ranking(
    client, ada, vsc3, tasks_run_at_commit
) -> None:
    client.force_login(ada)
    answer = upload(client, log("random-4k"), name="../../etc/passwd")
    check = JobCheck.objects.get(user=ada)
    assert answer.status_code == 302 and answer.url == reverse("jobio:detail", args=[check.pk])
    check.refresh_from_db()
    assert check.log is None and check.profile["writes"] == 16384
    assert check.label == "Upload: passwd"  # the name is a label, never a path

    page = client.get(answer.url).content.decode()
    assert "Job " in page and "random I/O" in page
    assert "like 2a: 16,384 writes of 4 KiB at random offsets, one process, one file" in page
    assert 'href="/lab/2a/?targets=tmp&amp;targets=global"' in page
    assert page.index("$TMPDIR</strong>") < page.index("$GLOBAL</strong>")
    assert '<table id="sizes-table" class="figures">' in page
    assert '<th scope="row">1–10 KiB</th><td>16384</td>' in page


def test_the_resembling_exercise_opens_with_the_recommended_targets_ticked(
    client, ada, vsc3
) -> None:
    client.force_login(ada)
    page = client.get("/lab/2a/?targets=tmp&targets=global&targets=nowhere").content.decode()
    ticked = re.findall(r'<input type="checkbox" name="targets" value="(\w+)"[^>]* checked>', page)
    assert ticked == ["global", "tmp"]  # the site's order; an unknown key ticks nothing


def test_a_check_is_its_owners_and_staffs_only(
    client, ada, make_user, vsc3, tasks_run_at_commit
) -> None:
    client.force_login(ada)
    url = upload(client, log("example")).url
    client.force_login(make_user())
    assert client.get(url).status_code == 404
    client.force_login(make_user(staff=True))
    assert client.get(url).status_code == 200
    client.logout()
    assert client.get(url).status_code == 302  # to the login page


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (not_a_log, "This is not a Darshan log"),
        (crafted_header, "This is not a Darshan log"),
        (lambda tmp: truncated(tmp, "random-4k", 0.9), "cut short or damaged"),
        (lambda tmp: log("noposix"), "has no POSIX record"),
    ],
)
def test_a_bad_log_gets_its_reason_and_nothing_is_stored(
    client, ada, make_user, vsc3, tasks_run_at_commit, tmp_path, make, says
) -> None:
    client.force_login(ada)
    url = upload(client, make(tmp_path)).url
    assert not JobCheck.objects.exists()
    page = client.get(url)
    assert page.status_code == 200 and says in page.content.decode()
    assert "Nothing of this log was kept" in page.content.decode()
    client.force_login(make_user())
    assert client.get(url).status_code == 404  # nor is the reason anyone else's


def test_an_upload_over_the_cap_is_refused_unread(client, ada, vsc3, settings) -> None:
    settings.DARSHAN_MAX_BYTES = 1024
    client.force_login(ada)
    answer = upload(client, log("small-files"))
    assert answer.status_code == 413
    assert "more than the 0.0 MiB a log may have here" in answer.content.decode()
    assert not JobCheck.objects.exists()


def test_the_page_polls_while_the_log_is_read(client, ada, vsc3) -> None:
    client.force_login(ada)
    url = upload(client, log("random-4k")).url  # no worker: it stays unread
    page = client.get(url).content.decode()
    assert 'hx-trigger="every 1s"' in page and "Reading the log" in page
    assert client.get(url, headers={"HX-Request": "true"}).status_code == 200


# --- the site's log directory ---------------------------------------------------------


@pytest.fixture
def log_dir(tmp_path, settings, monkeypatch) -> Path:
    """DARSHAN_LOG_DIR with today's folder, and "ada" as UID 69615 (the example log's)."""
    settings.DARSHAN_LOG_DIR = str(tmp_path)
    today = date.today()
    folder = tmp_path / str(today.year) / str(today.month) / str(today.day)
    folder.mkdir(parents=True)
    shutil.copy(log("example"), folder / "glock_vpicio_uni_id4478544-12345_3-20-1-1.darshan")
    shutil.copy(log("random-4k"), folder / "root_fio_id30572-30572_11-23-1-1.darshan")
    uids = {"ada": 69615, "bob": 1234}
    fake = SimpleNamespace(getpwnam=lambda name: SimpleNamespace(pw_uid=uids[name]))
    monkeypatch.setattr("jobio.checks.pwd", fake)
    return folder


def test_a_user_checks_their_own_job_by_its_id(
    client, make_user, vsc3, log_dir, tasks_run_at_commit
) -> None:
    client.force_login(make_user("ada"))
    answer = client.post(reverse("jobio:job"), {"job_id": "4478544"})
    page = client.get(answer.url).content.decode()
    assert "Job 4478544" in page and "2048 processes" in page


def test_another_users_job_is_refused_and_nothing_is_stored(
    client, make_user, vsc3, log_dir, tasks_run_at_commit
) -> None:
    client.force_login(make_user("bob"))
    answer = client.post(reverse("jobio:job"), {"job_id": "4478544"})
    page = client.get(answer.url).content.decode()
    assert "Job 4478544 ran as UID 69615, not as your cluster account (UID 1234)" in page
    assert not JobCheck.objects.exists()


@pytest.mark.parametrize(
    ("job_id", "says"),
    [("999", "No Darshan log of job 999 from the last 14 days"), ("12ab", "is a number")],
)
def test_a_job_without_a_log_or_a_bad_id_says_so(
    client, make_user, vsc3, log_dir, job_id, says
) -> None:
    client.force_login(make_user("ada"))
    answer = client.post(reverse("jobio:job"), {"job_id": job_id})
    assert answer.status_code == 400 and says in answer.content.decode()


def test_without_a_cluster_account_the_log_directory_is_closed(
    client, make_user, vsc3, log_dir
) -> None:
    client.force_login(make_user())
    answer = client.post(reverse("jobio:job"), {"job_id": "4478544"})
    assert answer.status_code == 400 and "no cluster account linked" in answer.content.decode()


def test_the_job_form_shows_only_where_a_site_keeps_logs(client, ada, vsc3, settings) -> None:
    client.force_login(ada)
    settings.DARSHAN_LOG_DIR = ""
    assert "Slurm job id" not in client.get(reverse("jobio:check")).content.decode()
    settings.DARSHAN_LOG_DIR = "/var/log/darshan"
    assert "Slurm job id" in client.get(reverse("jobio:check")).content.decode()
