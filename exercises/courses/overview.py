"""What a course shows its class and its instructors: the course's runs, the class's
figures and rates per exercise and target, how the class predicted each exercise, and
when any of it changed. The instructor's grid: grid.py. Who may see them: access.py."""

import statistics
from collections import defaultdict
from typing import NamedTuple

from django.db.models import Case, Count, F, FloatField, Func, Max, QuerySet, Value, When

from exercises.catalogue import figures
from exercises.catalogue.models import Exercise, StorageTarget
from exercises.courses.models import Course
from exercises.predictions import classwide, versus
from exercises.predictions.models import Prediction
from jobs.company import most_at_once, run_end, run_node_local
from jobs.figures import figure
from jobs.models import BenchmarkRun, RunResult, RunStatus


def overview_version(course: Course) -> str:
    """Changes whenever the instructor's grid would: a run of the class moving,
    arriving or leaving (reset), someone joining or leaving, or a prediction made or
    changed (3 queries)."""
    runs = BenchmarkRun.objects.filter(course=course).aggregate(n=Count("id"), at=Max("updated_at"))
    joined = course.enrollments.aggregate(n=Count("id"), newest=Max("id"))
    guessed = course_predictions(course).aggregate(n=Count("id"), at=Max("made_at"))
    at = runs["at"].timestamp() if runs["at"] else 0
    guessed_at = guessed["at"].timestamp() if guessed["at"] else 0
    return f"{runs['n']}-{at}-{joined['n']}-{joined['newest'] or 0}-{guessed['n']}-{guessed_at}"


def course_predictions(course: Course) -> QuerySet[Prediction]:
    """The predictions of the course's trainees of the course's exercises."""
    return Prediction.objects.filter(user__enrollments__course=course, exercise__courses=course)


class Guesses(NamedTuple):
    """A trainee's prediction of an exercise as the class's figures read it."""

    order: list[str]  # target keys, fastest first
    against: dict  # against other exercises: "8a/work" -> "faster" (predictions/versus.py)


def class_predictions(course: Course) -> dict[int, list[Guesses]]:
    """Exercise id -> the class's predictions of it (1 query)."""
    found: dict[int, list[Guesses]] = defaultdict(list)
    rows = course_predictions(course).values_list("exercise_id", "order", "against")
    for exercise_id, order, against in rows:
        if isinstance(order, list):
            kept = against if isinstance(against, dict) else {}
            found[exercise_id].append(Guesses([str(key) for key in order], kept))
    return found


class CourseRun(NamedTuple):
    """One run of a course as the instructor's grid and the class's figures read it."""

    user_id: int
    exercise_id: int
    target_id: int
    status: str
    created_at: float  # seconds since the epoch: a class's thousands of datetimes cost
    result_id: int | None
    write_mib_s: float | None  # None: no result, no write figure, or none that can be true
    # Its time in Slurm (None: it never started) and, on a target each node has its own
    # of, its node(s): which of the class's runs went at once (jobs/company.py).
    started: float | None = None
    ended: float | None = None
    node: str = ""


def _epoch(field: object) -> Func:
    return Func(field, template="EXTRACT(EPOCH FROM %(expressions)s)", output_field=FloatField())


EPOCH = _epoch(F("created_at"))


def course_runs(course: Course) -> list[CourseRun]:
    """Every run of the course, oldest first, with its write figure if it has one
    (1 query): the grid's cells and the class's figures are read from it."""
    runs = (
        BenchmarkRun.objects.filter(course=course)
        .order_by("created_at", "pk")
        # A float, not a datetime: Django reads each timestamp in Python, and a class
        # of 200 has thousands of runs (a third of the overview's time went there).
        .annotate(
            created=EPOCH,
            started=_epoch(F("started_at")),
            ended=_epoch(run_end()),
            node=Case(When(run_node_local(), then=F("node_names")), default=Value("")),
        )
    )
    fields = ("user_id", "exercise_id", "target_id", "status", "created", "result__id")
    rows = runs.values_list(
        *fields, "result__write_bytes_per_s", "result__processes", "started", "ended", "node"
    )
    return [
        CourseRun(*row[:6], _write_figure(row[3], *row[6:8]), *row[8:])  # started, ended, node
        for row in rows
    ]


def _write_figure(status: str, bytes_per_s: float | None, processes: int | None) -> float | None:
    """A run's figure counts once its run completed (RunResultQuerySet.figures)."""
    if status != RunStatus.COMPLETED:
        return None
    return figure("write_bytes_per_s", bytes_per_s, processes)


def class_figures(
    course: Course,
    exercises: list[Exercise] | None = None,
    targets: list[StorageTarget] | None = None,
    runs: list[CourseRun] | None = None,
) -> figures.Table:
    """Every exercise on every target of the course: each trainee's median write
    MiB/s, without names, and the site's reference (2 queries, and 1 for each of the
    course's exercises, targets and runs not given)."""
    per_trainee: dict[tuple[int, int], dict[int, list[float]]] = defaultdict(
        lambda: defaultdict(list)
    )
    runs = course_runs(course) if runs is None else runs
    for run in runs:
        if run.write_mib_s is not None:
            per_trainee[(run.exercise_id, run.target_id)][run.user_id].append(run.write_mib_s)
    trainees = {
        cell: [statistics.median(values) for values in people.values()]
        for cell, people in per_trainee.items()
    }
    table = figures.table(
        course.exercises.all() if exercises is None else exercises,
        course.targets.all() if targets is None else targets,
        trainees=trainees,
    )
    for cell, most in at_once(runs).items():
        if cell in table:
            table[cell].at_once = most
    return table


def at_once(runs: list[CourseRun]) -> dict[tuple[int, int], int]:
    """(exercise id, target id) -> the most of the class's runs that went at once on the
    target (and node, for a target each node has its own of) while a run of the
    exercise went (jobs/company.py: most_at_once)."""
    places: dict[tuple[int, str], list[tuple[float, float, int]]] = defaultdict(list)
    for run in runs:
        if run.started is not None and run.ended is not None:
            places[(run.target_id, run.node)].append((run.started, run.ended, run.exercise_id))
    found: dict[tuple[int, int], int] = {}
    for (target_id, _node), spans in places.items():
        for exercise_id, most in most_at_once(spans).items():
            cell = (exercise_id, target_id)
            found[cell] = max(found.get(cell, 0), most)
    return found


def class_chart(
    course: Course,
    exercise: Exercise,
    class_table: figures.Table,
    predictions: dict[int, list[Guesses]] | None = None,
) -> dict:
    """One exercise's class figures per target: the rows, and their chart; for a
    metadata exercise (mdtest), the class's median operations per second instead.
    With the class's `predictions` (class_predictions), how it predicted the exercise
    beside the class's medians, and against the other exercises its lesson names."""
    rows = [f for (exercise_id, _), f in class_table.items() if exercise_id == exercise.pk]
    predicted, against = None, []
    if predictions is not None and not exercise.measures_metadata:
        guesses = predictions.get(exercise.pk, [])
        predicted = classwide.summary(
            [g.order for g in guesses],
            [(f.target.key, f.target.name) for f in rows],
            {f.target.key: f.class_median for f in rows},
        )
        medians = {(f.exercise.key, f.target.key): f.class_median for f in class_table.values()}
        names = {f.target.key: f.target.name for f in rows}
        against = versus.class_said(
            versus.questions(exercise), [g.against for g in guesses], medians, names
        )
    return {
        "predicted": predicted,
        "against": against,
        "exercise": exercise,
        "id": f"class-{exercise.key}",
        "rows": rows,
        "data": figures.chart(rows, "class", "reference", "measured"),
        "rates": class_rates(course, exercise, [f.target for f in rows])
        if exercise.measures_metadata
        else None,
    }


def class_rates(
    course: Course, exercise: Exercise, targets: list[StorageTarget]
) -> list[tuple[StorageTarget, int, dict[str, float | None]]]:
    """Per target: how many runs gave rates, and the class's median of each (1 query)."""
    found = RunResult.objects.filter(run__course=course, run__exercise=exercise).rates_by_target()
    return [
        (t, found[t.pk].runs, found[t.pk].medians) if t.pk in found else (t, 0, {}) for t in targets
    ]
