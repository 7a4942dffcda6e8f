"""Predicting an exercise against another on a target its lesson names (8b against 8a
on $WORK): the question, the trainee's answer beside their runs, and the class's
beside its medians on the course's overview."""

import pytest
from django.test import Client
from django.utils import timezone

from exercises.courses.models import Course, Enrollment
from exercises.predictions.models import Prediction
from exercises.predictions.versus import class_said, questions
from jobs.models import BenchmarkRun, RunResult, RunStatus

pytestmark = pytest.mark.django_db

# 8b's ranking of the dev site's seven targets, fastest first.
PREDICTION = {
    f"place_{i}": key
    for i, key in enumerate(["tmp", "scratch", "binfs", "global", "project", "work", "home"], 1)
}


def asked(profile, key: str) -> list[tuple[str, str, float]]:
    exercise = profile.exercises.get(key=key)
    return [(v.key, v.target, v.within) for v in questions(exercise)]


def test_the_questions_come_from_the_lessons_that_set_two_exercises_side_by_side(
    dev_profile,
) -> None:
    assert asked(dev_profile, "8b") == [("8a/work", "work", 1.25)]
    assert asked(dev_profile, "10b") == [("10a/work", "work", 1.25)]
    assert asked(dev_profile, "10d") == [("10c/work", "work", 1.5)]  # its lesson: within 1.5
    assert asked(dev_profile, "11a") == [("11b/project", "project", 1.25)]  # speed, not space
    assert asked(dev_profile, "2a") == [
        ("1a/global", "global", 1.25),
        ("1a/scratch", "scratch", 1.25),
    ]
    assert asked(dev_profile, "1a") == []  # its lessons compare targets: the ranking asks that
    assert asked(dev_profile, "9") == []  # request sizes of one run


def run_of(user, profile, exercise: str, target: str, mib_s: float) -> None:
    ex, t = profile.exercises.get(key=exercise), profile.targets.get(key=target)
    run = BenchmarkRun.objects.create(
        user=user, cluster_username=user.cluster_account.username, target=t, exercise=ex,
        target_directory="/x", workload=ex.workload.model_dump(mode="json"),
        time_limit_minutes=2, result_token_hash="x", status=RunStatus.COMPLETED,
        result_received_at=timezone.now(),
    )  # fmt: skip
    RunResult.objects.create(run=run, engine="ior", processes=8, write_bytes_per_s=mib_s * 2**20)


def test_a_trainee_says_8b_will_beat_8a_and_the_runs_answer(
    client: Client, dev_profile, make_user
) -> None:
    trainee = make_user("sl-trainee5")
    client.force_login(trainee)
    form = client.get("/lab/8b/").content.decode()
    assert '<label for="id_against_1">8b on $WORK, against 8a:</label>' in form
    assert '<option value="faster">faster than 8a there</option>' in form

    client.post("/lab/8b/prediction", PREDICTION | {"against_1": "faster"})
    assert Prediction.objects.get(user=trainee).against == {"8a/work": "faster"}
    kept = client.get("/lab/8b/").content.decode()
    assert '<option value="faster" selected>faster than 8a there</option>' in kept

    run_of(trainee, dev_profile, "8b", "work", 41.0)
    waiting = client.get("/lab/8b/").content.decode()
    assert "You expected 8b on $WORK to be <strong>faster than 8a</strong> there: run both" in (
        waiting
    )
    run_of(trainee, dev_profile, "8a", "work", 12.0)
    page = client.get("/lab/8b/").content.decode()
    assert (
        "You expected 8b on $WORK to be <strong>faster than 8a</strong> there: your latest "
        "runs wrote 41.0 and 12.0 MiB/s (3.4×), faster than 8a: as you expected."
    ) in page


def test_an_answer_the_runs_turn_round_is_said_so(client: Client, dev_profile, make_user) -> None:
    trainee = make_user("sl-trainee5")
    client.force_login(trainee)
    client.post("/lab/8b/prediction", PREDICTION | {"against_1": "slower"})
    run_of(trainee, dev_profile, "8b", "work", 13.0)
    run_of(trainee, dev_profile, "8a", "work", 12.0)

    page = client.get("/lab/8b/").content.decode()

    assert "(1.1×), about as fast as 8a: not what you expected." in page


def test_an_answer_that_is_no_answer_is_refused(client: Client, dev_profile, make_user) -> None:
    trainee = make_user("sl-trainee5")
    client.force_login(trainee)

    response = client.post("/lab/8b/prediction", PREDICTION | {"against_1": "twice"})

    assert response.status_code == 400 and not Prediction.objects.exists()


def test_the_class_answers_beside_its_medians() -> None:
    class Exercise:  # what questions() reads of one
        key = "8b"
        claims = [{"faster": "work", "slower": "8a/work", "text": "Collective wins."}]

    (versus,) = questions(Exercise())
    answers = [{"8a/work": "faster"}] * 5 + [{"8a/work": "same"}, {"8a/work": "bogus"}, {}]
    medians = {("8b", "work"): 40.0, ("8a", "work"): 10.0}

    (said,) = class_said([versus], answers, medians, {"work": "$WORK"})

    assert said.voters == 6 and said.measured == "faster" and said.ratio == "4.0×"
    assert said.expected == ("5 expected it faster than 8a; 1 expected it about as fast as 8a")
    assert class_said([versus], [{}], medians, {}) == []  # nobody answered


def test_the_overview_shows_how_the_class_answered(client: Client, dev_profile, make_user) -> None:
    course = Course.objects.create(title="Storage 101", profile=dev_profile)
    course.exercises.set(dev_profile.exercises.filter(key__in=["8a", "8b"]))
    course.targets.set(dev_profile.targets.filter(key__in=["work", "tmp"]))
    for name, answer in (("sl-trainee5", "faster"), ("sl-trainee6", "same")):
        trainee = make_user(name)
        Enrollment.objects.create(course=course, user=trainee)
        client.force_login(trainee)
        # The course's two targets, fastest first.
        ranked = {"place_1": "tmp", "place_2": "work", "against_1": answer}
        assert client.post("/lab/8b/prediction", ranked).status_code == 302
    instructor = make_user(staff=True)
    course.instructors.add(instructor)
    client.force_login(instructor)

    page = client.get(f"/courses/{course.pk}/overview?exercise=8b").content.decode()

    assert "8b on $WORK, against 8a: 1 expected it faster than 8a; 1 expected it about" in page
    assert "Not measured by the class yet" in page


def test_the_answer_agrees_with_the_figures_as_the_page_shows_them(dev_profile) -> None:
    """50.04 against 40.0 MiB/s shows as 50.0 and 40.0, 1.25×: about as fast (within
    1.25), not faster, though the unrounded ratio is a hair above."""
    (versus,) = questions(dev_profile.exercises.get(key="8b"))
    assert versus.answer(50.04, 40.0) == "same"
    assert versus.answer(50.2, 40.0) == "faster" and versus.answer(40.0, 50.2) == "slower"
