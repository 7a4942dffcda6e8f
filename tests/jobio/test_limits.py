"""What one user may ask of the log reader: a few checks at once, a few per hour, a
bounded amount of logs waiting; their own queue; checks whose reader was lost end
with a reason instead of reading for ever; their page never loads the log's bytes."""

from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from jobio import checks
from jobio.models import CheckSource, JobCheck
from jobio.tasks import end_lost_checks, read_check
from portal.celery import app
from tests.jobio.logs import log

pytestmark = pytest.mark.django_db


def start(user, size: int = 100) -> JobCheck:
    return checks.from_upload(user, b"x" * size, "job.darshan")


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
