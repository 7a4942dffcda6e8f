"""Request bodies are capped before anything reads them: a body beyond its address's
limit is answered 413 without the CSRF check or the view parsing it (Django spools a
form's upload to disk whole when anything first reads request.POST)."""

import pytest
from django.http.multipartparser import MultiPartParser
from django.test import Client
from django.urls import reverse

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
