"""Every 403, 404, 405 and 500 is a page of the portal (its header, its style), saying
in plain words what happened and where to go, and never naming a class or an
exception; an HTMX request (a poll, a click in a panel) gets a short fragment instead.

This module is also the URLconf of the tests that need a view that fails (a 500)."""

import pytest
from django.conf import settings
from django.test import Client, RequestFactory
from django.urls import path

from exercises.courses.models import Enrollment
from jobs.models import BenchmarkRun
from portal import errors
from portal import urls as portal_urls
from portal.logins import instructors_group
from tests.courses import add_run, make_course
from tests.runs import make_run

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}
BROWSER = {"Accept": "text/html"}
# What a person must never read on an error page: Python's names and Django's texts.
NEVER = (
    "BenchmarkRun", "Resolver404", "Http404", "NotFound", "PermissionDenied", "Forbidden",
    "matches the given query", "Traceback", "RuntimeError", "exception", "'tried'",
    "CSRF cookie", "Enrollment", "Course matching",
)  # fmt: skip


def boom(request):
    raise RuntimeError("the database said: relation jobs_benchmarkrun does not exist")


urlpatterns = [*portal_urls.urlpatterns, path("tests/boom", boom)]
handler403 = portal_urls.handler403
handler404 = portal_urls.handler404
handler500 = portal_urls.handler500


def portal_page(answer) -> str:
    """The page's text, after checking it is the portal's, in its words."""
    page = answer.content.decode()
    assert page.startswith("<!doctype html>")
    assert 'class="topbar"' in page and "css/portal.css" in page  # base.html, styled
    assert "Where to go from here" in page
    for word in NEVER:
        assert word not in page, word
    return page


def fragment(answer) -> str:
    """An HTMX request's answer: one short message, no page to paste into a panel."""
    text = answer.content.decode()
    assert text.startswith('<p class="message error" role="alert">') and text.endswith("</p>")
    assert "<html" not in text and "topbar" not in text and len(text) < 300
    for word in NEVER:
        assert word not in text, word
    return text


@pytest.fixture
def others_run(make_user, disk_target) -> BenchmarkRun:
    return make_run(make_user("sl-err-owner").cluster_account, disk_target)


@pytest.fixture
def trainee_client(make_user) -> Client:
    client = Client(headers=BROWSER)
    client.force_login(make_user("sl-err-trainee"))
    return client


def test_the_tests_see_what_a_site_sees() -> None:
    assert settings.DEBUG is False  # with DEBUG on, Django shows its own debug pages


def test_a_trainee_opening_anothers_run_reads_the_portals_sentence(
    trainee_client, others_run
) -> None:
    answer = trainee_client.get(f"/jobs/runs/{others_run.key}/")

    assert answer.status_code == 404
    page = portal_page(answer)
    assert "No run of yours has this address: it may be another trainee&#x27;s run." in page
    assert "The lab</a>" in page and "My storage</a>" in page and "The start page</a>" in page


def test_a_bogus_address_is_the_portals_404(trainee_client) -> None:
    answer = trainee_client.get("/no/such/page/here")

    assert answer.status_code == 404
    page = portal_page(answer)
    assert "Page not found" in page
    assert "There is no page at this address, or it is not one you may see." in page


def test_a_bogus_address_sends_a_visitor_not_logged_in_to_log_in() -> None:
    page = portal_page(Client().get("/no/such/page/here"))

    assert 'href="/login/">Log in</a>' in page and "My storage" not in page


def test_a_sentence_written_for_people_is_shown(trainee_client) -> None:
    page = portal_page(trainee_client.get("/courses/987654321/"))

    assert "No such course among the ones you joined." in page


def test_djangos_own_not_found_text_gives_way_to_the_portals(trainee_client, others_run) -> None:
    """The run's I/O profile is still fetched with get_object_or_404, whose text names
    the model: the page says its own sentence instead."""
    answer = trainee_client.get(f"/check-my-job/runs/{others_run.key}/io")

    assert answer.status_code == 404
    assert "There is no page at this address" in portal_page(answer)


def test_a_get_of_a_post_only_address_is_a_405_page_with_allow(dev_profile, make_user) -> None:
    """A course's trainee reset, opened from the address bar by its instructor."""
    instructor, trainee = make_user("sl-err-inst"), make_user("sl-err-trainee2")
    instructor.groups.add(instructors_group())
    course = make_course(dev_profile, instructor, "Storage 405")
    Enrollment.objects.create(course=course, user=trainee)
    add_run(trainee.cluster_account, course, "1a", "tmp", 100)
    client = Client(headers=BROWSER)
    client.force_login(instructor)

    answer = client.get(f"/courses/{course.pk}/participants/{trainee.pk}/reset")

    assert answer.status_code == 405 and answer["Allow"] == "POST"
    page = portal_page(answer)
    assert "This address is not a page" in page and "Nothing was changed." in page
    assert BenchmarkRun.objects.filter(course=course, user=trainee).exists()


def test_a_405_to_a_visitor_not_logged_in_is_the_page_too() -> None:
    answer = Client().get("/logout/")

    assert answer.status_code == 405 and answer["Allow"] == "POST"
    assert "Log in</a>" in portal_page(answer)


def test_the_calibration_as_a_trainee_is_the_portals_403(trainee_client) -> None:
    answer = trainee_client.get("/lab/calibration/")

    assert answer.status_code == 403
    page = portal_page(answer)
    assert "This is not open to you" in page
    assert "Only instructors and staff see the site&#x27;s calibration." in page


def test_a_form_refused_by_the_csrf_check_is_the_portals_403(make_user) -> None:
    client = Client(enforce_csrf_checks=True, headers=BROWSER)
    client.force_login(make_user())

    answer = client.post("/logout/")  # no token: a page open too long, or another site

    assert answer.status_code == 403
    assert errors.CSRF_REFUSED in portal_page(answer)


def test_an_htmx_poll_of_a_run_that_is_not_yours_gets_a_short_fragment(
    trainee_client, others_run
) -> None:
    answer = trainee_client.get(f"/jobs/runs/{others_run.key}/", headers=HTMX)

    assert answer.status_code == 404
    assert "No run of yours has this address" in fragment(answer)


def test_htmx_requests_get_fragments_for_403_405_and_bogus_addresses(trainee_client) -> None:
    refused = trainee_client.get("/lab/calibration/", headers=HTMX)
    not_allowed = trainee_client.get("/logout/", headers=HTMX)
    missing = trainee_client.get("/lab/calibration/nothing", headers=HTMX)

    assert refused.status_code == 403 and "Only instructors and staff" in fragment(refused)
    assert not_allowed.status_code == 405 and not_allowed["Allow"] == "POST"
    assert fragment(not_allowed) and missing.status_code == 404 and fragment(missing)


@pytest.mark.urls(__name__)
def test_a_view_that_fails_is_the_portals_500_page(trainee_client) -> None:
    trainee_client.raise_request_exception = False

    answer = trainee_client.get("/tests/boom")

    assert answer.status_code == 500
    page = answer.content.decode()
    assert page.startswith("<!doctype html>") and "css/portal.css" in page
    assert "Something went wrong on our side" in page
    assert "relation jobs_benchmarkrun" not in page and "RuntimeError" not in page
    assert "The start page</a>" in page


@pytest.mark.urls(__name__)
def test_a_failing_htmx_request_gets_a_500_fragment(trainee_client) -> None:
    trainee_client.raise_request_exception = False

    answer = trainee_client.get("/tests/boom", headers=HTMX)

    assert answer.status_code == 500 and "Try again in a minute" in fragment(answer)


def test_the_500_page_reads_nothing_from_the_database(django_assert_num_queries) -> None:
    """What failed may be the database: the page needs neither it nor the session."""
    with django_assert_num_queries(0):
        answer = errors.server_error(RequestFactory().get("/"))

    assert answer.status_code == 500 and "Something went wrong" in answer.content.decode()


def test_a_500_page_that_cannot_be_drawn_is_plain_html(monkeypatch) -> None:
    def broken(*args, **kwargs):
        raise RuntimeError("no templates")

    monkeypatch.setattr(errors.loader, "render_to_string", broken)

    answer = errors.server_error(RequestFactory().get("/"))

    assert answer.status_code == 500 and answer.content.decode() == errors.PLAIN_500
