"""The class's predictions on the instructor's pages: the projector and the overview set
how the class predicted each exercise beside what it measured, live, and the exports
carry them."""

import csv
import io
import json

import pytest

from exercises.predictions.models import Prediction
from tests.courses import add_run
from tests.htmx import poll_headers, poll_url

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}


def predict(people, who: str, order: list[str], key: str = "1a") -> Prediction:
    exercise = people["course"].exercises.get(key=key)
    return Prediction.objects.create(user=people[who], exercise=exercise, order=order)


def test_the_projector_shows_how_the_class_predicted_beside_what_it_measured(
    client, people
) -> None:
    course = people["course"]  # 1a on $TMPDIR: 100 and 120 MiB/s
    predict(people, "trainee", ["scratch", "tmp"])
    predict(people, "classmate", ["scratch", "tmp"])
    add_run(people["trainee"].cluster_account, course, "1a", "scratch", 50)
    client.force_login(people["instructor"])

    page = client.get(f"/courses/{course.pk}/discussion/1a?view=large").content.decode()

    assert "How the class predicted 1a" in page and "(2 predictions," in page
    assert "Expected fastest: $SCRATCH <strong>100 %</strong>" in page
    assert (
        "<strong>100 %</strong> expected $SCRATCH to beat $TMPDIR:\n"
        "      ✗ the class measured $TMPDIR 2.2× faster (110.0 vs 50.0 MiB/s)"
    ) in page


def test_a_prediction_made_while_the_projector_shows_reaches_it(client, people) -> None:
    course = people["course"]
    client.force_login(people["instructor"])
    page = client.get(f"/courses/{course.pk}/discussion/1a").content.decode()
    url, headers = poll_url(page), HTMX | poll_headers(page)
    assert "How the class predicted" not in page
    assert client.get(url, headers=headers).status_code == 304

    predict(people, "trainee", ["tmp", "scratch"])
    fresh = client.get(url, headers=headers)

    assert fresh.status_code == 200
    assert "<strong>100 %</strong> expected $TMPDIR to beat $SCRATCH" in fresh.content.decode()


def test_the_overview_shows_it_and_the_trainees_course_page_does_not(client, people) -> None:
    course = people["course"]
    predict(people, "trainee", ["scratch", "tmp"])
    predict(people, "outsider", ["tmp", "scratch"])  # not in the course: not counted

    client.force_login(people["instructor"])
    overview = client.get(f"/courses/{course.pk}/overview").content.decode()
    client.force_login(people["trainee"])
    own = client.get(f"/courses/{course.pk}/").content.decode()

    assert "(1 prediction," in overview
    assert "expected $SCRATCH to beat $TMPDIR" in overview
    assert "How the class predicted" not in own


def test_the_exports_carry_the_predictions(client, people) -> None:
    course = people["course"]
    predict(people, "trainee", ["scratch", "tmp"])
    client.force_login(people["instructor"])

    body = json.loads(client.get(f"/courses/{course.pk}/export.json").content)
    rows = list(
        csv.DictReader(io.StringIO(client.get(f"/courses/{course.pk}/export.csv").content.decode()))
    )

    (made,) = body["predictions"]
    assert (made["participant"], made["exercise"], made["order"]) == (
        people["trainee"].username,
        "1a",
        ["$SCRATCH", "$TMPDIR"],
    )
    places = {r["participant"]: r["predicted_place"] for r in rows}
    assert places == {people["trainee"].username: "2", people["classmate"].username: ""}
