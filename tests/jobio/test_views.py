"""Check my job: uploads and the site's log directory, read by the task, seen by
their owner and staff only; bad logs leave nothing behind."""

import os
import re
import shutil
from datetime import date
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from jobio.models import JobCheck
from tests.jobio.logs import crafted_header, log, not_a_log, partial, truncated

pytestmark = pytest.mark.django_db


def upload(client, path: Path, name: str = "job.darshan"):
    data = SimpleUploadedFile(name, path.read_bytes(), "application/octet-stream")
    return client.post(reverse("jobio:upload"), {"log": data})


@pytest.fixture
def uploader(make_user):
    """A login without a cluster account: an upload needs none."""
    return make_user()


def test_an_upload_is_read_and_shows_its_io_and_ranking(
    client, uploader, vsc3, tasks_run_at_commit
) -> None:
    client.force_login(uploader)
    answer = upload(client, log("random-4k"), name="../../etc/passwd")
    check = JobCheck.objects.get(user=uploader)
    assert answer.status_code == 302 and answer.url == reverse("jobio:detail", args=[check.pk])
    check.refresh_from_db()
    assert check.log is None and check.io["writes"] == 16384
    assert check.label == "Upload: passwd"  # the name is a label, never a path

    page = client.get(answer.url).content.decode()
    assert "Job " in page and "random I/O" in page
    assert "like 2a: 16,384 writes of 4 KiB at random offsets, one process, one file" in page
    assert 'href="/lab/2a/?targets=tmp&amp;targets=global"' in page
    assert page.index("$TMPDIR</strong>") < page.index("$GLOBAL</strong>")
    assert '<table id="sizes-table" class="figures">' in page
    assert '<th scope="row">1–10 KiB</th><td>16384</td>' in page


def test_a_partial_log_is_flagged_and_sizes_are_binary(
    client, uploader, vsc3, tasks_run_at_commit, tmp_path
) -> None:
    client.force_login(uploader)
    whole = client.get(upload(client, log("small-files")).url).content.decode()
    cut_off = client.get(upload(client, partial(tmp_path)).url).content.decode()

    assert "This log is partial" not in whole
    assert "<strong>This log is partial.</strong>" in cut_off
    assert "the job opened more files than the log holds" in cut_off
    # 1,000 files of 16 KiB are 15.6 MiB (Django's filesizeformat said "16.0 MB").
    assert "<td>15.6 MiB in 1000 writes</td>" in whole and " MB" not in whole


def test_the_resembling_exercise_opens_with_the_recommended_targets_ticked(
    client, uploader, vsc3
) -> None:
    client.force_login(uploader)
    page = client.get("/lab/2a/?targets=tmp&targets=global&targets=nowhere").content.decode()
    ticked = re.findall(r'<input type="checkbox" name="targets" value="(\w+)"[^>]* checked>', page)
    assert ticked == ["global", "tmp"]  # the site's order; an unknown key ticks nothing


def test_a_check_is_its_owners_and_staffs_only(
    client, uploader, make_user, vsc3, tasks_run_at_commit
) -> None:
    client.force_login(uploader)
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
    client, uploader, make_user, vsc3, tasks_run_at_commit, tmp_path, make, says
) -> None:
    client.force_login(uploader)
    url = upload(client, make(tmp_path)).url
    assert not JobCheck.objects.exists()
    page = client.get(url)
    assert page.status_code == 200 and says in page.content.decode()
    assert "Nothing of this log was kept" in page.content.decode()
    assert "status -" not in page.content.decode()  # the truncated one kills the reader
    client.force_login(make_user())
    assert client.get(url).status_code == 404  # nor is the reason anyone else's


def test_an_upload_over_the_cap_is_refused_unread(client, uploader, vsc3, settings) -> None:
    settings.DARSHAN_MAX_BYTES = 1024
    client.force_login(uploader)
    answer = upload(client, log("small-files"))
    assert answer.status_code == 413
    assert "more than the 0.0 MiB a log may have here" in answer.content.decode()
    assert not JobCheck.objects.exists()


def test_the_page_polls_while_the_log_is_read(client, uploader, vsc3) -> None:
    client.force_login(uploader)
    url = upload(client, log("random-4k")).url  # no worker: it stays unread
    page = client.get(url).content.decode()
    assert 'hx-trigger="every 1s"' in page and "Reading the log" in page
    assert client.get(url, headers={"HX-Request": "true"}).status_code == 200


# --- the site's log directory ---------------------------------------------------------

ADA, BOB = 69615, 1234  # ada's UID is the example log's


@pytest.fixture
def log_dir(tmp_path, settings, monkeypatch) -> Path:
    """DARSHAN_LOG_DIR with today's folder and two logs in it, each owned by the UID
    that wrote it, as darshan-runtime leaves them; "ada" and "bob" as UIDs."""
    settings.DARSHAN_LOG_DIR = str(tmp_path)
    today = date.today()
    folder = tmp_path / str(today.year) / str(today.month) / str(today.day)
    folder.mkdir(parents=True)
    put(log("example"), folder / "glock_vpicio_uni_id4478544-12345_3-20-1-1.darshan", ADA)
    put(log("random-4k"), folder / "root_fio_id30572-30572_11-23-1-1.darshan", BOB)
    uids = {"ada": ADA, "bob": BOB}
    monkeypatch.setattr("jobio.checks.uid_of", uids.get)
    return folder


def put(source: Path, path: Path, uid: int) -> None:
    shutil.copy(source, path)
    os.chown(path, uid, uid)


def ask_for(client, job_id: str) -> str:
    """The check's page once the job's log was looked for and read."""
    answer = client.post(reverse("jobio:job"), {"job_id": job_id})
    assert answer.status_code == 302, answer.content.decode()[:500]
    return client.get(answer.url).content.decode()


def test_a_user_checks_their_own_job_by_its_id(
    client, make_user, vsc3, log_dir, tasks_run_at_commit
) -> None:
    client.force_login(make_user("ada"))
    page = ask_for(client, "4478544")
    assert "Job 4478544" in page and "2048 processes" in page


def test_the_web_request_only_records_the_job_the_worker_looks_for_its_log(
    client, make_user, vsc3, log_dir
) -> None:
    client.force_login(make_user("ada"))
    answer = client.post(reverse("jobio:job"), {"job_id": "999"})  # no such log, no worker

    assert answer.status_code == 302  # no file was looked at in the request
    check = JobCheck.objects.get()
    assert (check.job_id, check.expected_uid, check.log) == (999, ADA, None)


def test_another_users_job_is_refused_without_naming_them_and_nothing_is_stored(
    client, make_user, vsc3, log_dir, tasks_run_at_commit
) -> None:
    client.force_login(make_user("bob"))
    page = ask_for(client, "4478544")
    assert "No Darshan log of job 4478544 written by your cluster account" in page
    assert str(ADA) not in page
    assert not JobCheck.objects.exists()


def test_a_log_planted_under_the_users_job_id_is_passed_over_for_their_own(
    client, make_user, vsc3, log_dir, tasks_run_at_commit
) -> None:
    """bob writes a file named for ada's job, sorting before hers: hers is read."""
    put(log("random-4k"), log_dir / "aaa_planted_id4478544-1_1-1-1-1.darshan", BOB)
    client.force_login(make_user("ada"))
    page = ask_for(client, "4478544")
    assert "Job 4478544" in page and "2048 processes" in page


def test_a_link_or_a_fifo_named_for_the_job_is_never_opened(
    client, make_user, vsc3, log_dir, tasks_run_at_commit
) -> None:
    own = log_dir / "glock_vpicio_uni_id4478544-12345_3-20-1-1.darshan"
    own.rename(log_dir / "elsewhere")
    (log_dir / "ada_x_id4478544-1_1-1-1-1.darshan").symlink_to(log_dir / "elsewhere")
    os.lchown(log_dir / "ada_x_id4478544-1_1-1-1-1.darshan", ADA, ADA)
    fifo = log_dir / "ada_y_id4478544-2_1-1-1-1.darshan"
    os.mkfifo(fifo)  # opened for reading without O_NONBLOCK, it would wait for a writer
    os.chown(fifo, ADA, ADA)
    client.force_login(make_user("ada"))

    page = ask_for(client, "4478544")

    assert "No Darshan log of job 4478544 written by your cluster account" in page


def test_a_log_written_by_another_uid_under_the_users_name_is_refused_without_naming_it(
    client, make_user, vsc3, log_dir, tasks_run_at_commit
) -> None:
    """ada owns a copy of bob's log (job 30572 ran as root): the log's own UID decides."""
    put(log("random-4k"), log_dir / "ada_fio_id30572-1_1-1-1-1.darshan", ADA)
    client.force_login(make_user("ada"))
    page = ask_for(client, "30572")
    assert "The log of job 30572 was not written by your cluster account" in page
    assert "ran as UID" not in page


def test_a_job_without_a_log_says_so(client, make_user, vsc3, log_dir, tasks_run_at_commit) -> None:
    client.force_login(make_user("ada"))
    assert "No Darshan log of job 999 from the last 14 days" in ask_for(client, "999")


def test_a_bad_job_id_is_refused_at_once(client, make_user, vsc3, log_dir) -> None:
    client.force_login(make_user("ada"))
    answer = client.post(reverse("jobio:job"), {"job_id": "12ab"})
    assert answer.status_code == 400 and "is a number" in answer.content.decode()


def test_without_a_cluster_account_the_log_directory_is_closed(
    client, make_user, vsc3, log_dir
) -> None:
    client.force_login(make_user())
    answer = client.post(reverse("jobio:job"), {"job_id": "4478544"})
    assert answer.status_code == 400 and "no cluster account linked" in answer.content.decode()


def test_the_job_form_shows_only_where_a_site_keeps_logs(client, uploader, vsc3, settings) -> None:
    client.force_login(uploader)
    settings.DARSHAN_LOG_DIR = ""
    assert "Slurm job id" not in client.get(reverse("jobio:check")).content.decode()
    settings.DARSHAN_LOG_DIR = "/var/log/darshan"
    assert "Slurm job id" in client.get(reverse("jobio:check")).content.decode()
