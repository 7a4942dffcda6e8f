"""The instructor's grid of a class: a row per trainee, a cell per target of the
chosen exercise (or of every exercise, for a small class). A cell is the trainee's
median write MiB/s over their runs with a result, how many runs gave it, and the
status of their latest run when it is not done. Where each trainee stands on each
exercise (STATES) is counted, and who needs help is listed.

The rows are markup built here (`row_html`), not by the template: a poll redraws
200 of them, and the overview's poll sends only the rows that changed
(portal/polling.py: changed_pieces)."""

import html
import statistics
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cached_property

from django.urls import reverse
from django.utils import timezone

from exercises.catalogue.models import Exercise, StorageTarget
from exercises.courses.models import Course
from exercises.courses.overview import CourseRun
from jobs.figures import shown
from jobs.models import UNFINISHED_STATUSES, RunStatus

# A trainee's median this many times above or below the class median is flagged.
OUTLIER_FACTOR = 3.0
# The "needs help" list: a run waiting longer than this, a trainee with no run this
# long after joining. A 1a run takes a minute; a class starts within ten.
WAITING_HELP_MINUTES = 10
IDLE_HELP_MINUTES = 10
HELP_SHOWN = 10  # per list; the count says how many more

# Where a trainee stands on an exercise, in the order the counts are shown.
STATES = {
    "done": "done",
    "running": "running",
    "waiting": "waiting",
    "failed": "failed",
    "part": "part done",
    "none": "not started",
}
FAILED_STATUSES = (RunStatus.FAILED, RunStatus.TIMED_OUT, RunStatus.LOST)


@dataclass
class Cell:
    """One trainee's runs of one exercise on one target."""

    mib_s: list[float] = field(default_factory=list)  # the plausible figures
    results: int = 0  # runs with a result (an mdtest run has no write figure)
    latest: str = ""  # the latest run's status
    latest_has_result: bool = False
    latest_at: float | None = None  # seconds since the epoch (CourseRun.created_at)

    @cached_property  # read for every cell by the counts, the rows and the help list
    def state(self) -> str:
        if self.latest == RunStatus.RUNNING:
            return "running"
        if self.latest in UNFINISHED_STATUSES:
            return "waiting"
        if self.results:
            return "done"
        if self.latest in FAILED_STATUSES or self.latest == RunStatus.COMPLETED:
            return "failed"  # a completed run without a result: its output did not parse
        return "none"  # nothing yet, or only cancelled runs

    @property
    def median(self) -> float | None:
        return statistics.median(self.mib_s) if self.mib_s else None


def standing(states: list[str]) -> str:
    """Where a trainee stands, from the states of its parts: the cells of an exercise
    (one per target), or an exercise each. Going first, then done (every part done),
    failed, part done, not started."""
    for state in ("running", "waiting"):
        if state in states:
            return state
    if set(states) == {"done"}:
        return "done"
    if "failed" in states:
        return "failed"
    return "part" if {"done", "part"} & set(states) else "none"


@dataclass
class Trainee:
    user_id: int
    username: str
    cluster_username: str | None
    joined_at: datetime


Cells = dict[tuple[int, int, int], Cell]  # (user, exercise, target) -> Cell


def _state(cell: Cell | None) -> str:
    return cell.state if cell else "none"


def trainees(course: Course) -> list[Trainee]:
    """Everyone enrolled, in the order they joined (1 query): a row joining later is
    added at the end of the grid, where a poll can append it."""
    rows = course.enrollments.order_by("joined_at", "pk").values_list(
        "user_id", "user__username", "user__cluster_account__username", "joined_at"
    )
    return [Trainee(*row) for row in rows]


def cells_of(runs: list[CourseRun]) -> Cells:
    """Every trainee's cells, from the course's runs, oldest first."""
    cells: Cells = {}
    for run in runs:
        key = (run.user_id, run.exercise_id, run.target_id)
        cell = cells.get(key)
        if cell is None:
            cell = cells[key] = Cell()
        has_result = run.result_id is not None
        if has_result:
            cell.results += 1
            if run.write_mib_s is not None:
                cell.mib_s.append(run.write_mib_s)
        cell.latest, cell.latest_has_result, cell.latest_at = run.status, has_result, run.created_at
    return cells


def standings(
    people: list[Trainee], exercises: list[Exercise], targets: list[StorageTarget], cells: Cells
) -> dict[tuple[int, int], str]:
    """(user, exercise) -> where the trainee stands on it."""
    return {
        (p.user_id, e.pk): standing([_state(cells.get((p.user_id, e.pk, t.pk))) for t in targets])
        for p in people
        for e in exercises
    }


def counts(
    exercises: list[Exercise], people: list[Trainee], stand: dict[tuple[int, int], str]
) -> list[tuple[Exercise, Counter]]:
    """Per exercise, how many trainees stand where (each trainee counted once)."""
    return [(e, Counter(stand[(p.user_id, e.pk)] for p in people)) for e in exercises]


WAITING_TITLE = f' title="{RunStatus.WAITING.label}"'
NO_RUN_HTML = '<td class="c"><span class="muted">–</span></td>'
OUTLIER_HTML = (
    ' <span title="far from the class median" aria-label="far from the class median">⚠</span>'
)


def cell_html(cell: Cell | None, class_median: float | None) -> str:
    """A cell's <td>: the median and its run count, and the latest run's status when
    that is not a result (running, waiting, failed)."""
    if cell is None or not cell.latest:
        return NO_RUN_HTML
    parts = []
    median = cell.median
    if median is not None:
        parts.append(shown(median))
    if cell.results:
        parts.append(f'<small class="muted">×{cell.results}</small>')
    if not cell.latest_has_result:
        status = html.escape(cell.latest)
        why = WAITING_TITLE if cell.latest == RunStatus.WAITING else ""
        parts.append(f'<span class="status {status}"{why}>{status}</span>')
    outlier = bool(
        median
        and class_median
        and not (1 / OUTLIER_FACTOR <= median / class_median <= OUTLIER_FACTOR)
    )
    flag = OUTLIER_HTML if outlier else ""
    return f'<td class="c {cell.state}{" outlier" if outlier else ""}">{" ".join(parts)}{flag}</td>'


def participant_url(course: Course, user_id: int) -> str:
    return reverse("courses:participant", args=[course.pk, user_id])


def row_html(
    trainee: Trainee,
    state: str,
    cells: list[str],
    url: str,
) -> str:
    """A trainee's row: the name (to their page, with what the instructor may do) and
    their cells. data-* carry what the page filters and sorts on (static/js/grid.js)."""
    name = html.escape(trainee.username)
    account = html.escape(trainee.cluster_username or "no cluster account")
    return (
        f'<tr id="p-{trainee.user_id}" data-name="{html.escape(trainee.username.lower())}" '
        f'data-state="{state}" data-joined="{trainee.joined_at.timestamp():.6f}">'
        f'<th scope="row"><a href="{html.escape(url)}">{name}</a>'
        f'<br><small class="muted">{account}</small></th>{"".join(cells)}</tr>'
    )


@dataclass
class Help:
    """A trainee who may need help, and why."""

    user_id: int
    username: str
    why: str
    since: datetime


def _help(trainee: Trainee, cells: list[tuple[datetime, str, Cell]]) -> Help:
    """One line for a trainee however many of their cells are stuck: the oldest."""
    since, where, cell = cells[0]
    more = f" and {len(cells) - 1} more" if len(cells) > 1 else ""
    return Help(trainee.user_id, trainee.username, f"{where}{more}: {cell.latest}", since)


def rows(
    course: Course,
    people: list[Trainee],
    shown: list[Exercise],
    targets: list[StorageTarget],
    cells: Cells,
    stand: dict[tuple[int, int], str],
    class_medians: dict[tuple[int, int], float | None],
) -> dict[str, str]:
    """Each trainee's row of the grid of the `shown` exercises, by its element id, in
    joining order; a cell flagged when far from the class median of its column."""
    columns = [(e.pk, t.pk) for e in shown for t in targets]
    # Reversed once, not once per trainee: the poll of a class of 200 draws every row.
    slot = participant_url(course, 0).replace("/participants/0/", "/participants/{}/")
    drawn = {}
    for p in people:
        state = standing([stand[(p.user_id, e.pk)] for e in shown])
        markup = [cell_html(cells.get((p.user_id, *c)), class_medians.get(c)) for c in columns]
        drawn[f"p-{p.user_id}"] = row_html(p, state, markup, slot.format(p.user_id))
    return drawn


def needs_help(
    people: list[Trainee],
    exercises: list[Exercise],
    targets: list[StorageTarget],
    cells: Cells,
    now: datetime | None = None,
) -> dict[str, tuple[list[Help], int]]:
    """Trainees whose latest run of a cell failed; whose runs wait longest (beyond
    WAITING_HELP_MINUTES); who joined IDLE_HELP_MINUTES ago and have no run. Each
    list: its first HELP_SHOWN trainees (stuck longest first) and how many there are."""
    now = now or timezone.now()
    waiting_since = (now - timedelta(minutes=WAITING_HELP_MINUTES)).timestamp()
    idle_since = now - timedelta(minutes=IDLE_HELP_MINUTES)
    ran = {user_id for user_id, _, _ in cells}
    failed, waiting = [], []
    for p in people:
        stuck = {"failed": [], "waiting": []}
        for e in exercises:
            for t in targets:
                cell = cells.get((p.user_id, e.pk, t.pk))
                if cell is None:
                    continue
                if cell.state == "failed" or (
                    cell.state == "waiting" and cell.latest_at < waiting_since
                ):
                    since = datetime.fromtimestamp(cell.latest_at, UTC)
                    stuck[cell.state].append((since, f"{e.key} on {t.name}", cell))
        for kind, found in (("failed", failed), ("waiting", waiting)):
            if stuck[kind]:
                found.append(_help(p, sorted(stuck[kind], key=lambda s: s[0])))
    idle = [
        Help(p.user_id, p.username, "no run yet", p.joined_at)
        for p in people
        if p.user_id not in ran and p.joined_at < idle_since
    ]
    lists = {"failed": failed, "waiting": waiting, "idle": idle}
    return {
        kind: (sorted(found, key=lambda h: h.since)[:HELP_SHOWN], len(found))
        for kind, found in lists.items()
    }
