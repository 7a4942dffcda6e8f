"""Closing a course: it asks first, as a reset does; then the overview says since when
it is closed, and each trainee's lab and course page say their runs no longer count."""

from datetime import timedelta

import pytest
from django.utils import timezone

from exercises.courses.models import Course

pytestmark = pytest.mark.django_db


def close(client, course: Course, confirmed: bool = True):
    return client.post(f"/courses/{course.pk}/close", {"confirmed": "yes"} if confirmed else {})


def closed_since(client, course: Course) -> str:
    """Closes the course, confirmed; the time it closed, as pages write it ("08:38")."""
    close(client, course)
    course.refresh_from_db()
    return timezone.localtime(course.closes_at).strftime("%H:%M")


def test_closing_asks_first_and_closes_only_once_confirmed(client, people) -> None:
    course = people["course"]
    client.force_login(people["instructor"])

    asked = close(client, course, confirmed=False)

    page = asked.content.decode()
    assert asked.status_code == 200 and "<h1>Close Storage 101?</h1>" in page
    assert "no run counts for Storage 101 and nobody can join it" in page
    assert "Its 2 trainees may go on running the exercises in their own lab" in page
    course.refresh_from_db()
    assert course.is_open
    answer = close(client, course)
    course.refresh_from_db()
    assert answer.status_code == 302 and not course.is_open


def test_the_overview_says_since_when_it_is_closed(client, people) -> None:
    course = people["course"]
    client.force_login(people["instructor"])
    since = closed_since(client, course)

    page = client.get(f"/courses/{course.pk}/overview").content.decode()

    assert f'<span id="course-state">closed since {since}</span>' in page
    assert "until" not in page.split('id="course-state">')[1].split("</span>")[0]


def test_an_open_course_with_an_end_says_until_when(client, people) -> None:
    course = people["course"]
    course.closes_at = timezone.now() + timedelta(days=3)
    course.save()
    client.force_login(people["instructor"])
    when = timezone.localtime(course.closes_at).strftime("%Y-%m-%d %H:%M")

    page = client.get(f"/courses/{course.pk}/overview").content.decode()

    assert f'<span id="course-state">open until {when}</span>' in page


def test_a_trainees_lab_says_their_runs_no_longer_count(client, people) -> None:
    course = people["course"]
    client.force_login(people["instructor"])
    since = closed_since(client, course)
    said = f"Storage 101 is closed (since {since}): runs no longer count for Storage 101."

    client.force_login(people["trainee"])
    for url in ("/lab/", "/lab/1a/"):
        assert said in client.get(url).content.decode(), url
    mine = client.get(f"/courses/{course.pk}/").content.decode()
    assert f"The course is closed since {since}: runs no longer count for it" in mine
    assert "count for this course while it is open" not in mine

    client.force_login(people["outsider"])
    assert "no longer count" not in client.get("/lab/").content.decode()  # not theirs


def test_a_course_closed_weeks_ago_no_longer_fills_the_lab(client, people) -> None:
    course = people["course"]
    course.closes_at = timezone.now() - timedelta(days=20)
    course.save()
    client.force_login(people["trainee"])

    assert "no longer count" not in client.get("/lab/").content.decode()
