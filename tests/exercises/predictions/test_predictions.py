"""Predict, then measure: a trainee ranks an exercise's targets before their first
run of it; the runs then say, pair by pair, where the guess held."""

import re

import pytest
from django.test import Client

from exercises.courses.models import Course, Enrollment
from exercises.predictions.compare import Miss, misses
from exercises.predictions.models import Prediction
from jobs.models import BenchmarkRun
from tests.in_turn import FOUR_TARGETS
from tests.runs import make_runs

pytestmark = pytest.mark.django_db

# make_runs: 1a on $HOME, $GLOBAL, $SCRATCH, $TMPDIR at 100, 101, 102, 103 MiB/s.
SLOWEST_FIRST = {"place_1": "home", "place_2": "global", "place_3": "scratch", "place_4": "tmp"}


@pytest.fixture
def trainee(dev_profile, make_user):
    return make_user("sl-trainee4")


@pytest.fixture
def in_a_four_target_course(dev_profile, trainee) -> None:
    """The trainee joined a course on the lab's four targets (the dev site has six): a
    prediction ranks those four."""
    course = Course.objects.create(title="Storage 101", profile=dev_profile)
    course.exercises.set(dev_profile.exercises.all())
    course.targets.set(dev_profile.targets.filter(key__in=FOUR_TARGETS))
    Enrollment.objects.create(course=course, user=trainee)


def test_a_miss_is_a_pair_the_runs_put_the_other_way_round() -> None:
    medians = {"A": 10.0, "B": 30.0, "C": 20.0}

    assert misses(["A", "B", "C"], medians) == [
        Miss("A", "B", 10.0, 30.0),
        Miss("A", "C", 10.0, 20.0),
    ]
    assert misses(["B", "C", "A"], medians) == []
    assert misses(["A", "D", "B"], medians) == [Miss("A", "B", 10.0, 30.0)]  # D: no figure yet


def test_a_prediction_is_saved_and_shown_before_the_first_run(
    client: Client, trainee, in_a_four_target_course
) -> None:
    client.force_login(trainee)

    client.post("/lab/1a/prediction", SLOWEST_FIRST)
    page = client.get("/lab/1a/").content.decode()

    assert Prediction.objects.get(user=trainee).order == ["home", "global", "scratch", "tmp"]
    assert "Your prediction: <strong>$HOME > $GLOBAL > $SCRATCH > $TMPDIR</strong>" in page
    assert "Change my prediction" in page


def test_a_target_in_two_places_is_refused_with_why(client: Client, trainee) -> None:
    client.force_login(trainee)

    answer = client.post("/lab/1a/prediction", SLOWEST_FIRST | {"place_4": "home"})

    assert answer.status_code == 400
    assert "$HOME is in two places: give each target one." in answer.content.decode()
    assert not Prediction.objects.exists()


def test_after_the_first_run_the_prediction_stays_as_it_was(
    client: Client, trainee, dev_profile, in_a_four_target_course
) -> None:
    client.force_login(trainee)
    client.post("/lab/1a/prediction", SLOWEST_FIRST)
    make_runs(trainee.cluster_account, dev_profile, 4)

    answer = client.post(
        "/lab/1a/prediction", SLOWEST_FIRST | {"place_1": "tmp", "place_4": "home"}
    )

    assert Prediction.objects.get(user=trainee).order == ["home", "global", "scratch", "tmp"]
    page = client.get(answer["Location"]).content.decode()
    assert "a prediction is made before the first run and then stays as it was" in page
    assert 'id="predict"' not in page


def test_the_runs_say_where_the_prediction_missed(
    client: Client, trainee, dev_profile, in_a_four_target_course
) -> None:
    client.force_login(trainee)
    client.post("/lab/1a/prediction", SLOWEST_FIRST)
    make_runs(trainee.cluster_account, dev_profile, 4)

    page = client.get("/lab/1a/").content.decode()

    assert "Your prediction, measured" in page
    # Slowest first against 100 < 101 < 102 < 103: every one of the 6 pairs missed.
    assert page.count("You expected ") == 6
    assert "You expected $HOME to beat $TMPDIR: $TMPDIR wrote 103.0 MiB/s, $HOME 100.0" in page


def test_a_right_guess_is_told_so(
    client: Client, trainee, dev_profile, in_a_four_target_course
) -> None:
    client.force_login(trainee)
    fastest_first = {"place_1": "tmp", "place_2": "scratch", "place_3": "global", "place_4": "home"}
    client.post("/lab/1a/prediction", fastest_first)
    make_runs(trainee.cluster_account, dev_profile, 4)

    page = client.get("/lab/1a/").content.decode()

    assert "Your order held on the 4 targets measured so far." in page
    assert "You expected " not in page


def test_figures_guessed_on_a_log_scale_are_set_beside_the_runs(
    client: Client, trainee, dev_profile, in_a_four_target_course
) -> None:
    client.force_login(trainee)
    # make_runs measures about 100 MiB/s everywhere.
    guesses = {"figure_1": "1000", "figure_2": "100", "figure_3": "", "figure_4": "10"}
    client.post("/lab/1a/prediction", SLOWEST_FIRST | guesses)
    assert Prediction.objects.get(user=trainee).figures == {
        "home": 1000, "global": 100, "tmp": 10,
    }  # fmt: skip
    before = client.get("/lab/1a/").content.decode()
    assert '<option value="1000" selected>1,000 MiB/s</option>' in before  # kept to change

    make_runs(trainee.cluster_account, dev_profile, 4)
    page = client.get("/lab/1a/").content.decode()

    table = page[page.index('id="guesses"') :].split("</table>")[0]
    rows = re.findall(r'<tr><th scope="row">(.*?)</th><td class="num">(.*?)</td>'
                      r'<td class="num">(.*?)</td><td>(.*?)</td></tr>', table)  # fmt: skip
    assert rows == [
        ("$HOME", "1,000", "100.0", "10× too high"),
        ("$GLOBAL", "100", "101.0", "close (within 2×)"),
        ("$TMPDIR", "10", "103.0", "10× too low"),
    ]


def test_a_figure_off_the_scale_is_refused(client: Client, trainee) -> None:
    client.force_login(trainee)

    answer = client.post("/lab/1a/prediction", SLOWEST_FIRST | {"figure_1": "123"})

    assert answer.status_code == 400
    assert not Prediction.objects.exists()


def test_without_a_prediction_the_runs_page_says_nothing_of_one(
    client: Client, trainee, dev_profile
) -> None:
    make_runs(trainee.cluster_account, dev_profile, 4)
    client.force_login(trainee)

    page = client.get("/lab/1a/").content.decode()

    assert "Your prediction" not in page and 'id="predict"' not in page


def test_a_metadata_exercise_takes_no_prediction(client: Client, trainee) -> None:
    """mdtest's figures are file operations per second, not a ranking by MiB/s."""
    client.force_login(trainee)

    assert client.post("/lab/6/prediction", SLOWEST_FIRST).status_code == 404
    assert 'id="predict"' not in client.get("/lab/6/").content.decode()
    assert not Prediction.objects.exists()


# --- a course that asks for predictions first ----------------------------------


@pytest.fixture
def asking_course(dev_profile, trainee, make_user):
    from exercises.courses.models import Enrollment  # noqa: PLC0415
    from tests.courses import make_course  # noqa: PLC0415

    course = make_course(dev_profile, make_user(), "Predict first")
    course.predictions_required = True
    course.save()
    Enrollment.objects.create(course=course, user=trainee)
    return course


def test_a_course_that_asks_for_predictions_refuses_an_unpredicted_first_run(
    client: Client, trainee, asking_course
) -> None:
    client.force_login(trainee)
    page = client.get("/lab/1a/").content.decode()
    refused = client.post("/lab/1a/runs", {"targets": ["scratch"], "repeat": "1"})

    assert "Your course asks you to predict before your first run" in page
    assert "Your course asks you to predict first" in refused.content.decode()
    assert not BenchmarkRun.objects.filter(user=trainee).exists()


def test_once_predicted_the_runs_start(client: Client, trainee, asking_course) -> None:
    from exercises.lab.start import start_runs  # noqa: PLC0415

    client.force_login(trainee)
    client.post(
        "/lab/1a/prediction",
        {"place_1": "tmp", "place_2": "scratch", "place_3": "global", "place_4": "home"},
    )

    runs = start_runs(
        trainee, asking_course.exercises.get(key="1a"), list(asking_course.targets.all())
    )

    assert len(runs) == 2


def test_a_trainee_who_ran_it_before_the_course_asked_is_not_held_back(
    trainee, asking_course
) -> None:
    from exercises.lab.start import start_runs  # noqa: PLC0415

    make_runs(trainee.cluster_account, asking_course.profile, 1)  # before the course asked

    runs = start_runs(
        trainee, asking_course.exercises.get(key="1a"), list(asking_course.targets.all())
    )

    assert len(runs) == 2  # a prediction can no longer be made: the runs go on


def test_an_exercise_of_file_operations_is_never_held_for_a_prediction(
    trainee, asking_course
) -> None:
    from exercises.predictions.rules import first_run_held  # noqa: PLC0415

    metadata = asking_course.profile.exercises.get(key="6")

    assert not first_run_held(trainee, metadata, [asking_course])
    assert first_run_held(trainee, asking_course.exercises.get(key="1a"), [asking_course])
