"""The instructor's overview of a class: where each trainee stands, who needs help,
the grid of one exercise at a time, and polls that carry only what changed."""

import re
from types import SimpleNamespace

import pytest
from django.test import Client
from django.utils import timezone

from exercises.courses import views
from exercises.courses.models import Enrollment
from jobs.models import BenchmarkRun, RunStatus
from tests.courses import add_run, seed_class
from tests.htmx import poll_headers, poll_url
from tests.names import unique_name

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}
POLL_BYTES_TARGET = 20_000


def overview(client: Client, course, exercise: str = "") -> tuple[str, str, dict]:
    """The whole overview page, its poll's URL and the headers of its next poll."""
    query = f"?exercise={exercise}" if exercise else ""
    page = client.get(f"/courses/{course.pk}/overview{query}").content.decode()
    return page, poll_url(page), HTMX | poll_headers(page)


def rows_in(markup: str) -> list[str]:
    return re.findall(r'<tr[^>]* id="(p-\d+)"', markup)


def counts_of(page: str, exercise: str) -> list[str]:
    """The counts' row of one exercise: done, running, waiting, failed, part, none."""
    link = rf'<th scope="row"><a href="\?exercise={exercise}"'
    row = re.search(rf"<tr[^>]*>\s*{link}.*?</tr>", page, re.S)
    return re.findall(r'<td class="num">(?:<button[^>]*>)?(\d+)', row[0])


@pytest.fixture(autouse=True)
def one_minute(monkeypatch) -> None:
    """The overview's stamp holds the minute (the help lists age by it): pinned, so
    that two requests a few ms apart never straddle a minute and miss their 304."""
    pinned = timezone.now()
    monkeypatch.setattr(views, "timezone", SimpleNamespace(now=lambda: pinned))


@pytest.fixture
def big_class(dev_profile, people):
    """A class of 200 seeded on 1a and 2a, three of them stuck (tests/courses.py)."""
    course = people["course"]
    course.enrollments.all().delete()
    course.runs.all().delete()
    seeded = seed_class(course, 200, f"big{course.pk}")
    return course, seeded


def test_a_cell_is_the_trainees_median_with_its_run_count(client, people) -> None:
    course, trainee = people["course"], people["trainee"]
    for mib in (100, 120, 500):
        add_run(trainee.cluster_account, course, "1a", "scratch", mib)
    client.force_login(people["instructor"])

    page, _, _ = overview(client, course, "1a")

    row = re.search(rf'<tr[^>]* id="p-{trainee.pk}".*?</tr>', page, re.S)[0]
    # 1a on $SCRATCH: three runs, median 120; $TMPDIR: the fixture's one run of 100.
    assert '120.0 <small class="muted">×3</small>' in row
    assert '100.0 <small class="muted">×1</small>' in row
    assert "500.0" not in row  # the latest run is not what the cell shows


def test_each_trainee_is_counted_once_per_exercise_where_they_stand(
    client, people, make_user
) -> None:
    course = people["course"]  # 1a and 2a on $SCRATCH and $TMPDIR
    stands = {
        "done": [("scratch", 90), ("tmp", 300)],
        "running": [("scratch", 90), ("tmp", RunStatus.RUNNING)],
        "waiting": [("tmp", RunStatus.PENDING)],
        "failed": [("scratch", 90), ("tmp", RunStatus.FAILED)],
        "part": [("scratch", 90)],
        "none": [],
    }
    course.enrollments.all().delete()
    for runs in stands.values():
        trainee = make_user(unique_name("sl"))
        Enrollment.objects.create(course=course, user=trainee)
        for target, what in runs:
            if isinstance(what, int):
                add_run(trainee.cluster_account, course, "1a", target, what)
            else:
                add_run(trainee.cluster_account, course, "1a", target, None, status=what)
    client.force_login(people["instructor"])

    page, _, _ = overview(client, course, "1a")

    assert counts_of(page, "1a") == ["1"] * 6
    assert counts_of(page, "2a") == ["0"] * 5 + ["6"]  # nobody started 2a


def test_needs_help_lists_the_three_stuck_trainees_of_a_class_of_200(client, big_class) -> None:
    course, seeded = big_class
    client.force_login(course.instructors.get())

    page, _, _ = overview(client, course)

    help_box = re.search(r'<div id="needs-help">.*?</div>\s*</section>', page, re.S)[0]
    named = set(re.findall(r'<a href="[^"]+">([^<]+)</a>', help_box))
    assert named == {seeded[kind].username for kind in ("failed", "waiting", "idle")}
    assert "A run failed (1)" in help_box and "no run yet" in help_box
    assert "1a on $TMPDIR and 1 more: failed" in help_box  # 1a and 2a both failed there


def test_it_opens_on_the_exercise_the_class_is_on(client, people) -> None:
    course = people["course"]  # 1a and 2a on $SCRATCH and $TMPDIR; both ran 1a on $TMPDIR
    client.force_login(people["instructor"])

    _, first, _ = overview(client, course)
    for who in ("trainee", "classmate"):
        add_run(people[who].cluster_account, course, "1a", "scratch", 90)
    page, then, _ = overview(client, course)

    assert first.endswith("?exercise=1a")  # nobody has run 1a on $SCRATCH yet
    assert then.endswith("?exercise=2a")  # 1a done by all: the class is on 2a
    header = re.search(r'<table class="runs grid".*?</thead>', page, re.S)[0]
    assert header.count('<th scope="col">') == 1 + 2  # one exercise's grid, not all
    assert 'href="?exercise=all"' in page  # all of them: a link away, for a class this small


def test_a_class_of_200_sees_one_exercise_at_a_time(client, big_class) -> None:
    course, _ = big_class
    client.force_login(course.instructors.get())

    page, url, _ = overview(client, course)
    everything, _, _ = overview(client, course, "all")

    assert url.endswith("?exercise=1a")  # the first exercise, not all of them
    assert len(rows_in(page)) == 200
    header = re.search(r'<table class="runs grid".*?</thead>', page, re.S)[0]
    assert header.count('<th scope="col">') == 1 + 2  # names, then $SCRATCH and $TMPDIR
    assert poll_url(everything).endswith("?exercise=1a")  # "all" is for small classes
    assert 'href="?exercise=all"' not in page


def test_the_chosen_exercise_is_kept_after_an_action(client, big_class) -> None:
    course, _ = big_class
    client.force_login(course.instructors.get())
    overview(client, course, "2a")

    answer = client.post(f"/courses/{course.pk}/close", {"confirmed": "yes"})
    page = client.get(answer["Location"]).content.decode()

    assert answer["Location"] == f"/courses/{course.pk}/overview"
    assert 'aria-current="page">2a' in page  # not back to 1a, the default
    client.get(f"/courses/{course.pk}/overview?exercise=1a")
    assert 'aria-current="page">1a' in client.get(answer["Location"]).content.decode()


def test_a_poll_brings_only_the_row_that_changed(client, big_class) -> None:
    course, seeded = big_class
    client.force_login(course.instructors.get())
    page, url, headers = overview(client, course, "1a")
    assert client.get(url, headers=headers).status_code == 304

    mover = seeded["waiting"]
    BenchmarkRun.objects.filter(user=mover, exercise__key="1a").update(
        status=RunStatus.RUNNING, updated_at=timezone.now()
    )
    poll = client.get(url, headers=headers)

    body = poll.content.decode()
    assert poll.status_code == 200 and len(body) < POLL_BYTES_TARGET
    assert rows_in(body) == [f"p-{mover.pk}"]
    # Inside a <template>: beside the poll's <div>, a browser drops a bare <tr>.
    assert f'<template><tr hx-swap-oob="true" id="p-{mover.pk}"' in body
    assert 'class="status running"' in body and 'id="class-counts"' in body
    assert client.get(url, headers=HTMX | poll_headers(body)).status_code == 304


def test_a_poll_adds_who_joined_and_drops_who_left(client, people, make_user) -> None:
    course = people["course"]
    client.force_login(people["instructor"])
    _, url, headers = overview(client, course)
    newcomer = make_user("sl-trainee8")
    Enrollment.objects.create(course=course, user=newcomer)
    course.enrollments.filter(user=people["classmate"]).delete()

    body = client.get(url, headers=headers).content.decode()

    appended = re.search(r'<tbody hx-swap-oob="beforeend:#grid-rows">(.*?)</tbody>', body, re.S)
    assert rows_in(appended[1]) == [f"p-{newcomer.pk}"]
    assert f'<tr id="p-{people["classmate"].pk}" hx-swap-oob="delete"></tr>' in body
    assert f"p-{people['trainee'].pk}" not in body  # unchanged


def test_a_poll_from_a_version_it_does_not_know_brings_every_row(client, people) -> None:
    course = people["course"]
    client.force_login(people["instructor"])
    _, url, headers = overview(client, course)
    stamp = headers["If-None-Match"].strip('"').partition("/")[0]
    add_run(
        people["trainee"].cluster_account, course, "1a", "scratch", None, status=RunStatus.PENDING
    )

    body = client.get(url, headers=HTMX | {"If-None-Match": f'"{stamp}/forgotten"'})

    assert '<tbody id="grid-rows" hx-swap-oob="true">' in body.content.decode()
    assert len(rows_in(body.content.decode())) == 2


def test_an_edited_or_closed_course_reloads_the_open_overview(client, people) -> None:
    course = people["course"]
    client.force_login(people["instructor"])
    _, url, headers = overview(client, course)

    client.post(f"/courses/{course.pk}/close", {"confirmed": "yes"})

    assert client.get(url, headers=headers)["HX-Refresh"] == "true"


def test_an_unchanged_overview_is_answered_with_304_and_a_reset_is_not(client, people) -> None:
    course, trainee = people["course"], people["trainee"]
    client.force_login(people["instructor"])
    _, url, headers = overview(client, course)
    assert client.get(url, headers=headers).status_code == 304

    run = add_run(trainee.cluster_account, course, "1a", "scratch", None, status=RunStatus.PENDING)
    moved = client.get(url, headers=headers)
    assert moved.status_code == 200 and "pending" in moved.content.decode()
    headers = HTMX | poll_headers(moved.content.decode())

    BenchmarkRun.objects.filter(pk=run.pk).update(course=None)  # as a reset does
    reset = client.get(url, headers=headers)
    assert reset.status_code == 200 and "pending" not in reset.content.decode()


def test_a_name_in_the_grid_leads_to_the_trainees_runs_and_actions(client, people) -> None:
    course, trainee = people["course"], people["trainee"]
    add_run(trainee.cluster_account, course, "1a", "scratch", None, status=RunStatus.FAILED)
    BenchmarkRun.objects.filter(status=RunStatus.FAILED).update(status_reason="Disk quota exceeded")
    client.force_login(people["instructor"])
    url = f"/courses/{course.pk}/participants/{trainee.pk}/"

    page = client.get(url).content.decode()

    assert f'href="{url}"' in overview(client, course)[0]
    assert "Disk quota exceeded" in page and "Reset…" in page and "Remove from the course…" in page


@pytest.mark.parametrize("who", ["other instructor", "trainee", "outsider"])
def test_only_the_courses_instructors_see_a_trainees_page(client, people, who) -> None:
    course, trainee = people["course"], people["classmate"]
    client.force_login(people[who])

    assert client.get(f"/courses/{course.pk}/participants/{trainee.pk}/").status_code == 404


def test_a_user_who_is_not_in_the_course_has_no_page_in_it(client, people) -> None:
    client.force_login(people["instructor"])
    outsider = people["outsider"]

    page = client.get(f"/courses/{people['course'].pk}/participants/{outsider.pk}/")

    assert page.status_code == 404
