"""The discussion page, for the projector: it refreshes itself, has large type and
steps through the course's exercises."""

import json
import re

import pytest

from jobs.models import RunStatus
from tests.courses import add_run
from tests.htmx import poll_headers, poll_url

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}


def test_it_steps_to_the_previous_and_next_exercise_in_large_type(client, people) -> None:
    course = people["course"]  # 1a, then 2a
    client.force_login(people["instructor"])

    first = client.get(f"/courses/{course.pk}/discussion/1a?view=large").content.decode()
    last = client.get(f"/courses/{course.pk}/discussion/2a").content.decode()

    assert '<body class="projector"' in first
    assert f'href="/courses/{course.pk}/discussion/2a?view=large" rel="next"' in first
    assert 'rel="prev"' not in first and "(1 of 2)" in first
    assert f'href="/courses/{course.pk}/discussion/1a" rel="prev"' in last
    assert 'rel="next"' not in last and '<body class=""' in last


def test_it_refreshes_its_figures_when_the_class_moves(client, people) -> None:
    course = people["course"]
    client.force_login(people["instructor"])
    page = client.get(f"/courses/{course.pk}/discussion/1a").content.decode()
    url, headers = poll_url(page), HTMX | poll_headers(page)
    assert client.get(url, headers=headers).status_code == 304

    add_run(people["classmate"].cluster_account, course, "1a", "tmp", 400)
    fresh = client.get(url, headers=headers).content.decode()

    chart = json.loads(re.search(r'id="class-1a"[^>]*>(.*?)</script>', fresh, re.S)[1])
    runs = chart["series"][0]
    assert runs["name"] == "class"  # static/js/charts.js colours a series by its name
    # A dot per trainee: the classmate's 120 and 400 are one, their median.
    assert sorted(v for values in runs["values"] for v in values) == [100.0, 260.0]


def test_a_closed_course_is_discussed_without_polling(client, people) -> None:
    course = people["course"]
    client.force_login(people["instructor"])
    client.post(f"/courses/{course.pk}/close", {"confirmed": "yes"})
    add_run(people["trainee"].cluster_account, course, "1a", "tmp", None, status=RunStatus.FAILED)

    page = client.get(f"/courses/{course.pk}/discussion/1a").content.decode()

    assert "hx-trigger" not in page and "The course is closed" in page


def test_an_exercise_outside_the_course_is_not_found(client, people) -> None:
    client.force_login(people["instructor"])

    assert client.get(f"/courses/{people['course'].pk}/discussion/3a").status_code == 404
