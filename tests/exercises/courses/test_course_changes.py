"""What an instructor changes on a running course: a reset or a removal asks first
and can be undone for 10 minutes; the course closes and opens again; a new join code
replaces the old one."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from exercises.courses import changes
from exercises.courses.models import Course, Enrollment
from jobs.models import BenchmarkRun

pytestmark = pytest.mark.django_db


def in_course(course, user) -> int:
    return BenchmarkRun.objects.filter(course=course, user=user).count()


@pytest.mark.parametrize("action", ["reset", "remove"])
def test_a_reset_or_a_removal_asks_first_and_changes_nothing_until_confirmed(
    client, people, action
) -> None:
    course, trainee = people["course"], people["trainee"]
    client.force_login(people["instructor"])

    asked = client.post(f"/courses/{course.pk}/participants/{trainee.pk}/{action}")

    page = asked.content.decode()
    assert asked.status_code == 200 and "leaves the grid and the class's figures" in page
    assert "You can undo it from the course's page for 10 minutes." in page
    assert in_course(course, trainee) == 1
    assert Enrollment.objects.filter(course=course, user=trainee).exists()


def test_a_reset_takes_the_runs_out_and_undo_puts_them_back(client, people) -> None:
    course, trainee = people["course"], people["trainee"]
    client.force_login(people["instructor"])
    url = f"/courses/{course.pk}/participants/{trainee.pk}/reset"

    done = client.post(url, {"confirmed": "yes"}, follow=True).content.decode()

    assert in_course(course, trainee) == 0
    assert f"{trainee.username} is reset: 1 run(s) left the course&#x27;s figures." in done
    assert 'id="undo"' in done and "runs were reset (1 run)" in done
    back = client.post(f"/courses/{course.pk}/undo", follow=True).content.decode()
    assert in_course(course, trainee) == 1
    assert f"Undone: {trainee.username} and 1 run(s) are back in the course." in back
    assert 'id="undo"' not in back  # once
    assert (
        "Nothing to undo" in client.post(f"/courses/{course.pk}/undo", follow=True).content.decode()
    )


def test_a_removal_takes_the_trainee_out_and_undo_enrols_them_again(client, people) -> None:
    course, trainee = people["course"], people["trainee"]
    client.force_login(people["instructor"])

    client.post(f"/courses/{course.pk}/participants/{trainee.pk}/remove", {"confirmed": "yes"})

    assert not Enrollment.objects.filter(course=course, user=trainee).exists()
    assert in_course(course, trainee) == 0
    assert BenchmarkRun.objects.filter(user=trainee).count() == 1  # in their own lab still
    client.post(f"/courses/{course.pk}/undo")
    assert Enrollment.objects.filter(course=course, user=trainee).exists()
    assert in_course(course, trainee) == 1


def test_an_undo_after_ten_minutes_puts_nothing_back(client, people, monkeypatch) -> None:
    course, trainee = people["course"], people["trainee"]
    client.force_login(people["instructor"])
    client.post(f"/courses/{course.pk}/participants/{trainee.pk}/reset", {"confirmed": "yes"})
    monkeypatch.setattr(changes, "UNDO_SECONDS", -1)  # as if its time had gone by

    page = client.post(f"/courses/{course.pk}/undo", follow=True).content.decode()

    assert "Nothing to undo: a reset or a removal is undone within 10 min." in page
    assert in_course(course, trainee) == 0


def test_another_instructor_can_neither_reset_nor_undo(client, people) -> None:
    course, trainee = people["course"], people["trainee"]
    client.force_login(people["instructor"])
    client.post(f"/courses/{course.pk}/participants/{trainee.pk}/reset", {"confirmed": "yes"})
    client.force_login(people["other instructor"])

    assert client.post(f"/courses/{course.pk}/undo").status_code == 404
    assert in_course(course, trainee) == 0


def test_a_closed_course_takes_no_run_and_no_one_joins_until_it_opens_again(client, people) -> None:
    course = people["course"]
    client.force_login(people["instructor"])

    client.post(f"/courses/{course.pk}/close", {"confirmed": "yes"})

    course.refresh_from_db()
    assert not course.is_open
    client.force_login(people["outsider"])
    joined = client.post("/courses/join", {"join_code": course.join_code}, follow=True)
    assert "is not open for joining now" in joined.content.decode()
    client.force_login(people["trainee"])
    # "again": the fixture's run of 1a on $TMPDIR was made a moment ago (StartAgain).
    client.post("/lab/1a/runs", {"targets": ["tmp"], "repeat": "1", "again": "1"})
    newest = BenchmarkRun.objects.filter(user=people["trainee"]).order_by("-created_at").first()
    assert newest.course is None  # ran, but counts for no closed course

    client.force_login(people["instructor"])
    client.post(f"/courses/{course.pk}/reopen")
    course.refresh_from_db()
    assert course.is_open


def test_a_new_join_code_replaces_the_old_one(client, people) -> None:
    course = people["course"]
    old = course.join_code
    client.force_login(people["instructor"])

    page = client.post(f"/courses/{course.pk}/join-code", follow=True).content.decode()

    course.refresh_from_db()
    assert course.join_code != old and f"The new join code is {course.join_code}" in page
    client.force_login(people["outsider"])
    joined = client.post("/courses/join", {"join_code": old}, follow=True).content.decode()
    assert "No course has that join code" in joined
    assert not Course.objects.filter(join_code=old).exists()


def test_an_instructor_edits_the_title_cap_and_exercises_and_the_runs_stay(client, people) -> None:
    course = people["course"]
    client.force_login(people["instructor"])
    form = client.get(f"/courses/{course.pk}/edit").content.decode()
    ticked = re.findall(r'name="exercises" value="(\w+)"[^>]*checked', form)
    assert 'value="Storage 101"' in form and ticked == ["1a", "2a"]

    saved = client.post(
        f"/courses/{course.pk}/edit",
        {"title": "Storage 102", "exercises": ["1a"], "targets": ["tmp"], "max_active_runs": 2},
    )

    course.refresh_from_db()
    assert saved["Location"] == f"/courses/{course.pk}/overview"
    assert (course.title, course.max_active_runs) == ("Storage 102", 2)
    assert list(course.exercises.values_list("key", flat=True)) == ["1a"]
    assert course.runs.count() == 2  # the fixture's runs, still the course's
    page = client.get(f"/courses/{course.pk}/overview").content.decode()
    assert "Storage 102" in page and "at most 2 runs per trainee" in page


def test_a_bad_edit_says_what_is_wrong_and_changes_nothing(client, people) -> None:
    course = people["course"]
    client.force_login(people["instructor"])

    answer = client.post(
        f"/courses/{course.pk}/edit", {"title": "", "exercises": [], "max_active_runs": 0}
    )

    assert answer.status_code == 400
    assert "This field is required." in answer.content.decode()
    course.refresh_from_db()
    assert course.title == "Storage 101"


@pytest.mark.parametrize("who", ["other instructor", "trainee"])
def test_only_the_courses_instructors_edit_it(client, people, who) -> None:
    course = people["course"]
    client.force_login(people[who])

    answer = client.post(f"/courses/{course.pk}/edit", {"title": "Mine now"})

    assert answer.status_code == 404
    course.refresh_from_db()
    assert course.title == "Storage 101"


def test_an_edit_shows_the_closing_time_as_the_browser_reads_it_and_keeps_it(
    client, people
) -> None:
    course = people["course"]
    closes = timezone.localtime() + timedelta(days=2)
    course.closes_at = closes.replace(second=0, microsecond=0)
    course.save()
    client.force_login(people["instructor"])

    form = client.get(f"/courses/{course.pk}/edit").content.decode()
    shown = re.search(r'name="closes_at" value="([^"]*)"', form)[1]
    client.post(
        f"/courses/{course.pk}/edit",
        {"title": "Storage 101", "exercises": ["1a", "2a"], "targets": ["tmp"],
         "max_active_runs": 4, "closes_at": shown},
    )  # fmt: skip

    assert shown == closes.strftime("%Y-%m-%dT%H:%M")  # a datetime-local input's value
    course.refresh_from_db()
    assert course.closes_at == closes.replace(second=0, microsecond=0)


def test_an_instructor_asks_a_running_course_to_predict_first(client, people) -> None:
    course = people["course"]
    client.force_login(people["instructor"])
    form = client.get(f"/courses/{course.pk}/edit").content.decode()
    assert "Trainees predict first" in form

    client.post(
        f"/courses/{course.pk}/edit",
        {
            "title": course.title,
            "max_active_runs": 4,
            "predictions_required": "on",
            "exercises": ["1a", "2a"],
            "targets": ["scratch", "tmp"],
        },
    )

    course.refresh_from_db()
    assert course.predictions_required
