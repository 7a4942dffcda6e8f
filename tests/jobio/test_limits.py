"""What one user may ask of the log reader: a few checks at once, a few per hour, a
bounded amount of logs waiting; their own queue; checks whose reader was lost end
with a reason instead of reading for ever; their page never loads the log's bytes."""

import tracemalloc
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client
from django.test.client import ClientHandler
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from jobio import checks
from jobio.models import CheckSource, JobCheck
from jobio.tasks import end_lost_checks, read_check
from portal.celery import app
from portal.units import MiB
from tests.jobio.logs import log

pytestmark = pytest.mark.django_db


def start(user, size: int = 100) -> JobCheck:
    return checks.from_upload(user, ContentFile(b"x" * size, name="job.darshan"))


def test_a_third_check_at_once_is_refused(make_user) -> None:
    ada = make_user()
    start(ada), start(ada)

    with pytest.raises(checks.CheckRefused, match="2 of your Darshan logs are being read"):
        start(ada)
    start(make_user())  # someone else's are theirs


def test_logs_waiting_beyond_the_users_bytes_are_refused(make_user, settings) -> None:
    settings.DARSHAN_USER_MAX_BYTES = 1000
    ada = make_user()
    start(ada, size=600)

    with pytest.raises(checks.CheckRefused, match="would be more than"):
        start(ada, size=600)


def test_checks_started_in_an_hour_are_limited(make_user, settings) -> None:
    settings.DARSHAN_CHECKS_PER_HOUR = 3
    ada = make_user()
    for _ in range(3):
        JobCheck.objects.filter(pk=start(ada).pk).update(io={"read": True})

    with pytest.raises(checks.CheckRefused, match="You started 3 checks in this hour"):
        start(ada)


def test_the_upload_page_says_why_a_check_is_refused(client, make_user, vsc3) -> None:
    ada = make_user()
    start(ada), start(ada)
    client.force_login(ada)

    data = SimpleUploadedFile("job.darshan", log("random-4k").read_bytes())
    answer = client.post(reverse("jobio:upload"), {"log": data})

    assert answer.status_code == 400
    assert "2 of your Darshan logs are being read" in answer.content.decode()


def post_from_disk(client: Client, path: str, fields: dict[str, str], size: int, tmp: Path):
    """Posts an upload of `size` bytes from a file on disk, as a browser sends it (the
    test client would build the body in memory), through every middleware; returns the
    answer and the most memory Python held meanwhile."""
    boundary = "storagelab-test-boundary"
    body = tmp / "body"
    with body.open("wb") as f:
        for name, value in fields.items():
            f.write(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'
                    f"{value}\r\n".encode())  # fmt: skip
        f.write(f'--{boundary}\r\nContent-Disposition: form-data; name="log"; '
                'filename="job.darshan"\r\nContent-Type: application/octet-stream\r\n\r\n'
                .encode())  # fmt: skip
        for _ in range(size // MiB):
            f.write(b"\0" * MiB)
        f.write(f"\r\n--{boundary}--\r\n".encode())
    with body.open("rb") as stream:
        environ = client._base_environ(
            PATH_INFO=path,
            REQUEST_METHOD="POST",
            CONTENT_TYPE=f"multipart/form-data; boundary={boundary}",
            CONTENT_LENGTH=str(body.stat().st_size),
            HTTP_ACCEPT="text/html",
            **{"wsgi.input": stream},
        )
        tracemalloc.start()
        try:
            answer = ClientHandler(enforce_csrf_checks=False)(environ)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    return answer, peak


def test_a_user_at_their_limits_is_refused_before_their_upload_is_read(
    client, make_user, vsc3, settings, tmp_path
) -> None:
    """64 MiB arrive on disk as they come (Django spools an upload there); a user who
    may start no check now is told so before a byte of it is read into memory."""
    ada = make_user()
    start(ada), start(ada)
    client.force_login(ada)

    size = settings.DARSHAN_MAX_BYTES
    answer, peak = post_from_disk(client, reverse("jobio:upload"), {}, size, tmp_path)

    assert answer.status_code == 400
    assert "2 of your Darshan logs are being read" in answer.content.decode()
    assert peak < 16 * MiB, f"{peak / MiB:.0f} MiB held for an upload of {size / MiB:.0f} MiB"
    assert JobCheck.objects.filter(user=ada).count() == 2


def test_an_upload_within_the_limits_is_kept_whole(client, make_user, vsc3, settings, tmp_path):
    ada = make_user()
    client.force_login(ada)

    answer, _ = post_from_disk(client, reverse("jobio:upload"), {}, 8 * MiB, tmp_path)

    assert answer.status_code == 302
    check = JobCheck.objects.get(user=ada)
    assert bytes(check.log) == b"\0" * (8 * MiB)


def test_checks_whose_reader_was_lost_end_with_a_reason(make_user) -> None:
    ada = make_user()
    lost, waiting, going = start(ada), start(ada), start(make_user())
    long_ago = timezone.now() - timedelta(hours=2)
    JobCheck.objects.filter(pk=lost.pk).update(read_started_at=long_ago)
    JobCheck.objects.filter(pk=waiting.pk).update(created_at=long_ago)
    JobCheck.objects.filter(pk=going.pk).update(read_started_at=timezone.now())

    end_lost_checks()

    assert list(JobCheck.objects.values_list("pk", flat=True)) == [going.pk]
    assert "lost the reader" in checks.visible_check(ada, lost.pk).reason
    assert "waited an hour" in checks.visible_check(ada, waiting.pk).reason


def test_a_check_begun_is_not_read_twice(make_user, monkeypatch) -> None:
    check = start(make_user())
    JobCheck.objects.filter(pk=check.pk).update(read_started_at=timezone.now())
    monkeypatch.setattr("jobio.tasks.parse_bytes_with_site_limits", pytest.fail)

    read_check(str(check.pk))  # a duplicate message


def test_checks_are_read_on_their_own_queue() -> None:
    for name in (read_check.name, end_lost_checks.name):
        assert app.amqp.router.route({}, name)["queue"].name == "darshan"


def test_the_polled_check_page_never_loads_the_log(client, make_user, vsc3) -> None:
    ada = make_user()
    check = start(ada, size=10_000)
    client.force_login(ada)

    with CaptureQueriesContext(connection) as queries:
        page = client.get(reverse("jobio:detail", args=[check.pk]), headers={"HX-Request": "1"})
        client.get(reverse("jobio:check"))

    assert page.status_code == 200
    assert not [q["sql"] for q in queries.captured_queries if '"log"' in q["sql"]]
    assert check.source == CheckSource.UPLOAD
