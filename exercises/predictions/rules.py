"""Predict, then measure: when a trainee may predict an exercise, and when a course
holds back their first run of it until they have. The lab's page, its prediction
form and its start_runs (exercises/lab/start.py) ask here; the words they answer
with are the lab's."""

from collections.abc import Iterable
from typing import Protocol

from django.contrib.auth.models import AbstractBaseUser

from exercises.catalogue.models import Exercise, StorageTarget
from exercises.predictions.models import Prediction
from jobs.models import BenchmarkRun


class Course(Protocol):
    """What a course says of predictions (exercises/courses sits above this app)."""

    predictions_required: bool


def takes_prediction(exercise: Exercise) -> bool:
    """An exercise that measures file operations (mdtest) has rates, not MiB/s: there
    is no order of the targets to predict."""
    return not exercise.measures_metadata


def may_predict(exercise: Exercise, ran: bool) -> bool:
    """Before the first run of it only (and changed at will until then): from then
    on a prediction stays as it was, to be set beside the runs. `ran`: whether the
    trainee has a run of it, as the caller already knows."""
    return takes_prediction(exercise) and not ran


def has_run(user: AbstractBaseUser, exercise: Exercise) -> bool:
    return BenchmarkRun.objects.filter(user=user, exercise=exercise).exists()


def ranked_targets(
    targets: list[StorageTarget], courses: dict[int, Course | None]
) -> list[StorageTarget]:
    """The targets a prediction ranks: those the trainee's open courses teach, when one
    does (a course of four of the site's seven targets asks about those four, which the
    class compares), else every target of the site. `courses`: target id -> the open
    course a run there counts for (courses.access.open_courses_for)."""
    taught = [t for t in targets if courses.get(t.pk)]
    return taught or targets


def asked_first(courses: Iterable[Course | None]) -> bool:
    """Whether one of the courses the runs would count for asks for predictions first."""
    return any(course.predictions_required for course in courses if course)


def first_run_held(
    user: AbstractBaseUser, exercise: Exercise, courses: Iterable[Course | None]
) -> bool:
    """A first run of an exercise a course asks to predict first, not yet predicted.
    A trainee who ran it before the course asked goes on: a prediction can no longer
    be made."""
    if not takes_prediction(exercise) or not asked_first(courses):
        return False
    if Prediction.objects.filter(user=user, exercise=exercise).exists():
        return False
    return not has_run(user, exercise)
