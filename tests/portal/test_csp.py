"""Every answer carries the Content-Security-Policy (portal/csp.py): pages and HTMX
fragments, logged in or not, redirects, errors and refusals; and no page the policy
covers has inline script or style for it to block."""

import re

import pytest
from django.contrib.auth.models import Permission
from django.test import Client

from exercises.courses.models import Enrollment
from tests.courses import add_run, make_course
from tests.names import unique_name

pytestmark = pytest.mark.django_db

POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)
HTMX = {"HX-Request": "true"}
# What the policy would block: a <script> with code in it (not a file, not json_script's
# data), a style element or attribute, an inline event handler, htmx's hx-on.
INLINE = re.compile(
    r'<script(?![^>]*(\bsrc=|type="application/json"))|<style|\sstyle=|\son[a-z]+=|\shx-on',
    re.IGNORECASE,
)


@pytest.fixture
def course(dev_profile, make_user):
    """A course with its instructor and a trainee who ran 1a on $TMPDIR."""
    instructor = make_user(unique_name("sl-teacher"))
    instructor.user_permissions.add(Permission.objects.get(codename="teach_course"))
    course = make_course(dev_profile, instructor, unique_name("Storage 101"))
    trainee = make_user(unique_name("sl-trainee"))
    Enrollment.objects.create(course=course, user=trainee)
    add_run(trainee.cluster_account, course, "1a", "tmp", 100)
    return course


def answers(client: Client, urls: list[str], headers: dict | None = None) -> dict:
    return {url: client.get(url, headers=headers or {}) for url in urls}


def test_anonymous_pages_redirects_and_errors_carry_the_policy(client: Client) -> None:
    got = answers(client, ["/login/", "/", "/storage/", "/healthz", "/no-such-page/"])

    assert {url: a.status_code for url, a in got.items()} == {
        "/login/": 200, "/": 302, "/storage/": 302, "/healthz": 200, "/no-such-page/": 404,
    }  # fmt: skip
    assert all(a["Content-Security-Policy"] == POLICY for a in got.values())


def test_a_trainees_pages_and_fragments_carry_the_policy(client: Client, course) -> None:
    trainee = Enrollment.objects.get(course=course).user
    client.force_login(trainee)
    pages = ["/", "/lab/", "/lab/1a/", "/storage/", "/check-my-job/", f"/courses/{course.pk}/"]

    got = answers(client, pages) | {"HTMX /lab/1a/": client.get("/lab/1a/", headers=HTMX)}

    # The runs panel's fragment: nothing of hers runs, so its last answer (286).
    assert {url: a.status_code for url, a in got.items()} == dict.fromkeys(pages, 200) | {
        "HTMX /lab/1a/": 286
    }
    assert all(a["Content-Security-Policy"] == POLICY for a in got.values())
    inline = {url: INLINE.findall(a.content.decode()) for url, a in got.items()}
    assert not any(inline.values()), inline


def test_an_instructors_overview_and_its_poll_carry_the_policy(client: Client, course) -> None:
    client.force_login(course.instructors.get())
    url = f"/courses/{course.pk}/overview"

    page, poll = client.get(url), client.get(url, headers=HTMX)

    assert page.status_code == poll.status_code == 200
    assert page["Content-Security-Policy"] == poll["Content-Security-Policy"] == POLICY
    assert not INLINE.findall(page.content.decode() + poll.content.decode())


def test_refusals_carry_the_policy(client: Client, make_user, settings) -> None:
    """A body over the cap (413, answered before anything reads it) and a login paused
    after wrong passwords (429)."""
    settings.REQUEST_MAX_BYTES = 4096
    too_large = client.post("/login/", "x" * 8192, content_type="text/plain")
    ada = make_user()
    for _ in range(5):
        paused = client.post("/login/", {"username": ada.username, "password": "guess"})

    assert too_large.status_code == 413 and paused.status_code == 429
    assert too_large["Content-Security-Policy"] == paused["Content-Security-Policy"] == POLICY
