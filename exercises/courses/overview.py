"""What a course shows its class and its instructors: the class's figures and rates
per exercise and target, the instructor's grid with its outliers, and when the grid
changed. Who may see them: access.py."""

import html
from collections import defaultdict
from dataclasses import dataclass

from django.db.models import Count, Max
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe

from exercises.catalogue import figures
from exercises.catalogue.models import Exercise, StorageTarget
from exercises.courses.models import Course
from jobs.engines.base import plausible
from jobs.models import BenchmarkRun, RunResult, RunStatus
from portal.units import mib

# A run this many times above or below the class median is flagged for a look.
OUTLIER_FACTOR = 3.0


def overview_version(course: Course) -> str:
    """Changes whenever the instructor's grid would: a run of the class moving,
    arriving or leaving (reset), or someone joining or leaving (2 queries)."""
    runs = BenchmarkRun.objects.filter(course=course).aggregate(n=Count("id"), at=Max("updated_at"))
    joined = course.enrollments.aggregate(n=Count("id"), newest=Max("id"))
    at = runs["at"].timestamp() if runs["at"] else 0
    return f"{runs['n']}-{at}-{joined['n']}-{joined['newest'] or 0}"


@dataclass
class Participant:
    """One row of the instructor grid: who, and where their row's actions post."""

    user_id: int
    username: str
    cluster_username: str | None
    cancel_url: str
    reset_url: str
    remove_url: str


@dataclass
class Cell:
    """One participant's latest run of one exercise on one target (none: no status)."""

    status: str = ""
    mib_s: float | None = None
    outlier: bool = False

    def __html__(self) -> str:
        """The cell's <td>, built here, not in the template: the overview draws 800 of
        them every 3 s for a class of 200, and the template engine's tags and filters
        were most of its time (see rows_html)."""
        if not self.status:
            return NO_RUN_HTML
        status = html.escape(self.status)  # Django's escape checks for lazy text: 800 times
        figure = f"<br>{self.mib_s:.1f} MiB/s" if self.mib_s else ""  # a number: no markup
        flag = OUTLIER_HTML if self.outlier else ""
        outlier = " outlier" if self.outlier else ""
        why = WAITING_TITLE if self.status == RunStatus.WAITING else ""
        cell = f'<td class="cell{outlier}"><span class="status {status}"{why}>{status}</span>'
        return f"{cell}{figure}{flag}</td>"


NO_RUN = Cell()
WAITING_TITLE = f' title="{RunStatus.WAITING.label}"'
NO_RUN_HTML = '<td class="cell"><span class="muted">–</span></td>'
OUTLIER_HTML = (
    ' <span title="far from the class median" aria-label="far from the class median">⚠</span>'
)


PARTICIPANT_ROW = (
    '<tr><th scope="row">{username}<br><span class="muted">{account}</span></th>{cells}'
    '<td class="actions">'
    '<button type="submit" form="participant-actions" formaction="{cancel}" class="link">'
    "cancel runs</button> "
    '<button type="submit" form="participant-actions" formaction="{reset}" class="link">'
    "reset…</button> "
    '<button type="submit" form="participant-actions" formaction="{remove}" class="link">'
    "remove…</button></td></tr>\n"
)


def rows_html(
    participants: list[Participant],
    cells: dict,
    columns: list[tuple[Exercise, StorageTarget]],
) -> SafeString:
    """Every participant's row of the grid as one piece of markup, built here and not
    by the template: for a class of 200 (800 cells), a redraw of the overview took
    49 ms with the template drawing the cells and 24 ms with the cells built here
    (both measured in an earlier session); with the whole rows built here and the
    course's runs read once, ~22 ms in-process (bench/README.md: run A)."""
    keys = [(e.pk, t.pk) for e, t in columns]
    rows = (
        PARTICIPANT_ROW.format(
            username=html.escape(p.username),
            account=html.escape(p.cluster_username or "no cluster account"),
            cells="".join(cells.get((p.user_id, *cell), NO_RUN).__html__() for cell in keys),
            cancel=html.escape(p.cancel_url),
            reset=html.escape(p.reset_url),
            remove=html.escape(p.remove_url),
        )
        for p in participants
    )
    return mark_safe("".join(rows))  # noqa: S308 -- each value is escaped above


# One run of a course as the instructor's grid and the class's figures read it:
# (user id, exercise id, target id, status, write bytes/s, processes).
ClassRun = tuple[int, int, int, str, float | None, int | None]


def class_runs(course: Course) -> list[ClassRun]:
    """Every run of the course, oldest first, with its write figure if it has one
    (1 query): the grid's cells and the class's figures are read from it."""
    runs = BenchmarkRun.objects.filter(course=course).order_by("created_at")
    return list(
        runs.values_list(
            "user_id",
            "exercise_id",
            "target_id",
            "status",
            "result__write_bytes_per_s",
            "result__processes",
        )
    )


def class_figures(
    course: Course,
    exercises: list[Exercise] | None = None,
    targets: list[StorageTarget] | None = None,
    runs: list[ClassRun] | None = None,
) -> figures.Table:
    """Every exercise on every target of the course: the class's write MiB/s,
    without names, and the site's reference (2 queries, and 1 for each of the
    course's exercises, targets and runs not given)."""
    values: figures.Values = defaultdict(list)
    for _, exercise_id, target_id, _, bytes_per_s, processes in (
        class_runs(course) if runs is None else runs
    ):
        if plausible(bytes_per_s, processes):
            values[(exercise_id, target_id)].append(mib(bytes_per_s))
    return figures.table(
        course.exercises.all() if exercises is None else exercises,
        course.targets.all() if targets is None else targets,
        classmates=values,
    )


def class_chart(course: Course, exercise: Exercise, class_table: figures.Table) -> dict:
    """One exercise's class figures per target: the rows, and their chart; for a
    metadata exercise (mdtest), the class's median operations per second instead."""
    rows = [f for (exercise_id, _), f in class_table.items() if exercise_id == exercise.pk]
    return {
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


def grid(
    course: Course,
    exercises: list[Exercise],
    targets: list[StorageTarget],
    runs: list[ClassRun],
    class_table: figures.Table,
) -> tuple[list[Participant], list[tuple[Exercise, StorageTarget]], dict]:
    """Participants x (exercise, target): each cell the participant's latest run of
    `runs`, flagged when far from the class median in `class_table` (1 query, for
    the participants). Polled every 3 s by the instructor of a class of 200: rows are
    plain values, not model instances, and each action's URL is reversed once, not
    once per participant."""
    columns = [(e, t) for e in exercises for t in targets]
    urls = {
        action: reverse(f"courses:participant-{action}", args=[course.pk, 0])
        for action in ("cancel", "reset", "remove")
    }
    slot = "/participants/0/"
    participants = [
        Participant(
            user_id,
            username,
            cluster_username,
            *(url.replace(slot, f"/participants/{user_id}/") for url in urls.values()),
        )
        for user_id, username, cluster_username in course.enrollments.values_list(
            "user_id", "user__username", "user__cluster_account__username"
        )
    ]
    cells: dict[tuple[int, int, int], Cell] = defaultdict(Cell)
    medians = {cell: f.class_median for cell, f in class_table.items()}
    # Oldest first: the latest run of each cell wins.
    for user_id, exercise_id, target_id, status, bytes_per_s, processes in runs:
        mib_s = mib(bytes_per_s) if plausible(bytes_per_s, processes) else None
        median = medians.get((exercise_id, target_id))
        outlier = bool(
            mib_s and median and not (1 / OUTLIER_FACTOR <= mib_s / median <= OUTLIER_FACTOR)
        )
        cells[(user_id, exercise_id, target_id)] = Cell(status, mib_s, outlier)
    return participants, columns, cells
