"""Request bodies are capped before anything reads them: a body beyond its address's
limit is answered 413 without the CSRF check or the view parsing it (Django spools a
form's upload to disk whole when anything first reads request.POST); and a client not
logged in sends no more than a login form, whatever the address."""

import ast
import io
import uuid

import pytest
from django.conf import settings as django_settings
from django.http.multipartparser import MultiPartParser
from django.test import Client
from django.urls import reverse

from portal.limits import ANONYMOUS_MAX_BYTES
from portal.units import MiB
from tests.portal.test_sso_settings import settings_with

pytestmark = pytest.mark.django_db


@pytest.fixture
def nothing_parsed(monkeypatch) -> list[str]:
    """Fails the test if any form body is parsed."""
    parsed: list[str] = []

    def parse(self):
        parsed.append("multipart")
        raise AssertionError("a form body over the cap was parsed")

    monkeypatch.setattr(MultiPartParser, "parse", parse)
    return parsed


def browser(user=None) -> Client:
    client = Client(enforce_csrf_checks=True, HTTP_ACCEPT="text/html")
    if user:
        client.force_login(user)
    return client


def test_an_upload_over_the_cap_is_refused_before_the_csrf_check_reads_it(
    make_user, settings, nothing_parsed
) -> None:
    settings.DARSHAN_MAX_BYTES = 2**20
    body = b"x" * (2 * 2**20)

    answer = browser(make_user()).post(
        reverse("jobio:upload"), body, content_type="multipart/form-data; boundary=b"
    )

    assert answer.status_code == 413
    page = answer.content.decode()
    assert "What you sent is too large" in page and "more than the 1.0 MiB this page takes" in page
    assert nothing_parsed == []


def test_a_form_post_over_the_default_cap_is_refused(make_user, settings, nothing_parsed):
    settings.REQUEST_MAX_BYTES = 4096
    answer = browser().post("/login/", b"x" * 5000, content_type="multipart/form-data; boundary=b")
    assert answer.status_code == 413 and nothing_parsed == []


def test_a_jobs_output_over_the_cap_gets_one_line(client, settings) -> None:
    settings.RESULT_MAX_BYTES = 100
    answer = client.post(
        "/jobs/runs/00000000-0000-0000-0000-000000000000/result",
        b"x" * 101,
        content_type="text/plain",
    )
    assert answer.status_code == 413
    assert answer.content.decode() == (
        "The request's body is 101 bytes, more than the 100 this address takes.\n"
    )


def test_bodies_within_the_cap_pass(client, settings) -> None:
    settings.RESULT_MAX_BYTES = 100
    answer = client.post(
        "/jobs/runs/00000000-0000-0000-0000-000000000000/result",
        b"x" * 100,
        content_type="text/plain",
    )
    assert answer.status_code == 404  # the view's answer: no such run
    assert client.get("/login/").status_code == 200


# --- a client not logged in ------------------------------------------------------

FORGED = "f" * 32  # a CSRF cookie the attacker set, and the same token in the form


class CountingInput:
    """A request's wsgi.input that counts the bytes read of it."""

    def __init__(self, body: bytes):
        self.stream = io.BytesIO(body)
        self.read_bytes = 0

    def read(self, size: int = -1) -> bytes:
        chunk = self.stream.read(size)
        self.read_bytes += len(chunk)
        return chunk

    def readline(self, size: int = -1) -> bytes:
        line = self.stream.readline(size)
        self.read_bytes += len(line)
        return line


def upload(size: int) -> tuple[bytes, str]:
    """A Check-my-job upload form of `size` bytes, its CSRF token the forged cookie's."""
    boundary = "storagelab-limits-test"
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="csrfmiddlewaretoken"\r\n\r\n'
        f'{FORGED}\r\n--{boundary}\r\nContent-Disposition: form-data; name="log"; '
        'filename="job.darshan"\r\nContent-Type: application/octet-stream\r\n\r\n'
    ).encode()
    tail = f"\r\n--{boundary}--\r\n".encode()
    return head + b"\0" * (size - len(head) - len(tail)) + tail, (
        f"multipart/form-data; boundary={boundary}"
    )


def send(client: Client, path: str, body: bytes, content_type: str) -> tuple[object, int]:
    """Posts `body`; the answer, and how much of the body was read."""
    sent = CountingInput(body)
    answer = client.post(path, body, content_type=content_type, **{"wsgi.input": sent})
    return answer, sent.read_bytes


def test_an_anonymous_8_mib_upload_with_a_forged_csrf_cookie_is_refused_unread(
    nothing_parsed,
) -> None:
    body, content_type = upload(8 * MiB)
    client = browser()
    client.cookies["csrftoken"] = FORGED

    answer, read = send(client, reverse("jobio:upload"), body, content_type)

    assert answer.status_code == 413
    page = answer.content.decode()
    assert "Log in first" in page and "did not read what you sent (8.0 MiB)" in page
    assert 'href="/login/"' in page
    assert read == 0 and nothing_parsed == []


def test_a_program_not_logged_in_gets_one_line(nothing_parsed) -> None:
    body, content_type = upload(ANONYMOUS_MAX_BYTES + 1)
    answer, read = send(Client(), "/login/", body, content_type)

    assert answer.status_code == 413 and read == 0
    assert answer.content.decode() == (
        f"Log in first: the request's body is {ANONYMOUS_MAX_BYTES + 1:,} bytes, and a "
        f"client not logged in sends at most {ANONYMOUS_MAX_BYTES:,}.\n"
    )


def test_a_made_up_session_cookie_is_no_login(nothing_parsed) -> None:
    body, content_type = upload(8 * MiB)
    client = browser()
    client.cookies["csrftoken"] = FORGED
    client.cookies[django_settings.SESSION_COOKIE_NAME] = "s" * 32

    answer, read = send(client, reverse("jobio:upload"), body, content_type)

    assert answer.status_code == 413 and read == 0


def test_a_login_form_and_a_logged_in_upload_are_read(make_user) -> None:
    login, login_type = upload(2 * 1024)  # a login form's size: read as ever
    body, content_type = upload(ANONYMOUS_MAX_BYTES * 2)
    visitor, client = browser(), browser(make_user())
    for each in (visitor, client):
        each.cookies["csrftoken"] = FORGED

    anonymous, anonymous_read = send(visitor, "/login/", login, login_type)
    answer, read = send(client, reverse("jobio:upload"), body, content_type)

    assert anonymous.status_code != 413 and anonymous_read > 0
    assert answer.status_code != 413 and read == len(body)  # the view read the upload


@pytest.mark.parametrize("address", ["/jobs/runs/{key}/result", "/check-my-job/runs/{key}/logs"])
def test_a_jobs_posts_keep_their_own_caps(address) -> None:
    """The job script logs nobody in: its run's secret authenticates it (an unknown
    run here: the view's own answer, a 404)."""
    body = b"x" * (ANONYMOUS_MAX_BYTES * 4)
    answer, _ = send(Client(), address.format(key=uuid.uuid4()), body, "text/plain")

    assert answer.status_code == 404


def test_the_anonymous_cap_knows_the_user_before_the_csrf_check_reads_a_form() -> None:
    """After the session and authentication middleware, and the REMOTE_USER login
    where the site logs in so; a middleware's call runs before any process_view, the
    CSRF check's reading of the form among them."""
    order = django_settings.MIDDLEWARE
    cap = order.index("portal.limits.AnonymousBodyLimit")
    assert order.index("django.contrib.auth.middleware.AuthenticationMiddleware") < cap
    assert order.index("django.contrib.sessions.middleware.SessionMiddleware") < cap
    remote = ast.literal_eval(settings_with("MIDDLEWARE", LOGIN_METHOD="remote_user"))
    assert remote.index("portal.remote_user.RemoteUserMiddleware") < remote.index(
        "portal.limits.AnonymousBodyLimit"
    )
