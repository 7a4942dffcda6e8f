"""Course pages: joining, the trainee's checklist, the instructor's live overview,
the discussion view and the exports. Who may see what: exercises/courses/access.py."""

import csv
import math

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import (
    HttpRequest,
    HttpResponse,
    HttpResponseNotModified,
    JsonResponse,
)
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_POST

from exercises.catalogue import measuring
from exercises.catalogue.models import Exercise
from exercises.catalogue.profiles import active_profile
from exercises.catalogue.quiet import quiet_figures, shared
from exercises.courses import access, changes, grid, overview
from exercises.courses.forms import CourseForm, JoinCourseForm
from exercises.courses.models import Course, Enrollment
from exercises.predictions.models import Prediction
from jobs.company import annotated, company
from jobs.figures import RATE_FIELDS
from jobs.models import BenchmarkRun, RunResult
from portal import units
from portal.errors import NotFound
from portal.models import ClusterAccount
from portal.permissions import only_if
from portal.polling import changed_pieces, held_version, oob, poll_answer, unchanged


@login_required
def course_list(request: HttpRequest) -> HttpResponse:
    ctx = {
        "enrollments": request.user.enrollments.select_related("course"),
        "taught": access.taught_by(request.user),
        "can_teach": access.can_teach(request.user),
        "join_form": JoinCourseForm(),
    }
    return render(request, "courses/course_list.html", ctx)


@require_POST
@login_required
def course_join(request: HttpRequest) -> HttpResponse:
    form = JoinCourseForm(request.POST)
    problem = None
    course = None
    if not form.is_valid():
        problem = " ".join(form.errors.get("join_code", []))
    else:
        course = Course.objects.filter(join_code=form.cleaned_data["join_code"]).first()
        if course is None:
            problem = "No course has that join code. Check it with your instructor."
        elif not course.is_open:
            problem = f"{course.title} is not open for joining now."
        elif not ClusterAccount.objects.filter(user=request.user).exists():
            problem = (
                "Your portal login has no cluster account, and course exercises run as "
                "your cluster account. Ask your instructor or HPC support to link it, "
                "then join again."
            )
    if problem:
        messages.error(request, problem)
        return redirect("courses:course-list")
    _, created = Enrollment.objects.get_or_create(course=course, user=request.user)
    messages.info(request, f"You joined {course.title}." if created else "You are in already.")
    return redirect("courses:course-detail", pk=course.pk)


@only_if(access.can_teach, "Only instructors create courses.")
def course_create(request: HttpRequest) -> HttpResponse:
    profile = active_profile()
    form = CourseForm(request.POST or None, profile=profile)
    if request.method == "POST" and form.is_valid():
        with transaction.atomic():
            course = Course.objects.create(
                title=form.cleaned_data["title"],
                profile=profile,
                closes_at=form.cleaned_data["closes_at"],
                max_active_runs=form.cleaned_data["max_active_runs"],
                predictions_required=form.cleaned_data["predictions_required"],
            )
            course.instructors.add(request.user)
            course.exercises.set(profile.exercises.filter(key__in=form.cleaned_data["exercises"]))
            course.targets.set(profile.targets.filter(key__in=form.cleaned_data["targets"]))
        messages.info(request, f"Course created. Trainees join with the code {course.join_code}.")
        return redirect("courses:course-overview", pk=course.pk)
    status = 400 if form.is_bound else 200
    return render(request, "courses/course_form.html", {"form": form}, status=status)


@login_required
def course_edit(request: HttpRequest, pk: int) -> HttpResponse:
    """Title, closing time, cap and the exercises and targets of a running course.
    Runs of an exercise or target taken out stay in the course and come back with it."""
    course = access.course_for_instructor(request.user, pk)
    initial = {
        "title": course.title,
        "closes_at": course.closes_at,
        "max_active_runs": course.max_active_runs,
        "predictions_required": course.predictions_required,
        "exercises": list(course.exercises.values_list("key", flat=True)),
        "targets": list(course.targets.values_list("key", flat=True)),
    }
    form = CourseForm(request.POST or None, initial=initial, profile=course.profile)
    if request.method == "POST" and form.is_valid():
        with transaction.atomic():
            edited = ["title", "closes_at", "max_active_runs", "predictions_required"]
            for name in edited:
                setattr(course, name, form.cleaned_data[name])
            course.save(update_fields=[*edited, "changed_at"])
            chosen = form.cleaned_data
            course.exercises.set(course.profile.exercises.filter(key__in=chosen["exercises"]))
            course.targets.set(course.profile.targets.filter(key__in=chosen["targets"]))
        messages.info(request, f"{course.title} is saved.")
        return redirect("courses:course-overview", pk=course.pk)
    ctx = {"form": form, "course": course}
    return render(request, "courses/course_form.html", ctx, status=400 if form.is_bound else 200)


@login_required
def participant_detail(request: HttpRequest, pk: int, user_id: int) -> HttpResponse:
    """One trainee of the course, for their instructor: their runs in it (with why a
    run failed) and what the instructor may do: cancel, reset, remove."""
    course = access.course_for_instructor(request.user, pk)
    enrollment = access.enrollment_in(course, user_id)
    runs = (
        BenchmarkRun.objects.filter(course=course, user_id=user_id)
        .select_related("exercise", "target", "result")
        .defer("job_script", "workload", "raw_output")
        .order_by("-created_at")
    )
    ctx = {"course": course, "enrollment": enrollment, "runs": runs}
    return render(request, "courses/participant_detail.html", ctx)


@login_required
def course_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """The trainee's checklist, and the class's figures without names."""
    course = access.course_for_trainee(request.user, pk)
    done = set(
        BenchmarkRun.objects.filter(course=course, user=request.user, result__isnull=False)
        .values_list("exercise_id", "target_id")
        .distinct()
    )
    targets = list(course.targets.all())
    exercises = list(course.exercises.all())
    class_table = overview.class_figures(course)
    measuring.say_unmeasured(course.profile_id, list(class_table.values()))
    ctx = {
        "course": course,
        "targets": targets,
        "checklist": [(e, [(t, (e.pk, t.pk) in done) for t in targets]) for e in exercises],
        "charts": [overview.class_chart(course, e, class_table) for e in exercises],
    }
    return render(request, "courses/course_detail.html", ctx)


# "All exercises at once" is offered to classes this small: beyond, a grid of every
# exercise and target is too wide to read and too heavy to poll.
ALL_AT_ONCE_MAX_TRAINEES = 30
HELP_TITLES = {
    "failed": "A run failed",
    "waiting": f"Waiting over {grid.WAITING_HELP_MINUTES} minutes",
    "idle": f"No run {grid.IDLE_HELP_MINUTES} minutes after joining",
}


def _overview_stamp(course: Course, runs_version: str | None, chosen: str) -> str | None:
    """What the overview shows depends on: the course itself (first: a change of it
    reloads the page), its runs and participants, the clock's minute (the "needs
    help" list ages) and the exercise shown. None for a closed course: not polled."""
    if runs_version is None:
        return None
    minute = int(timezone.now().timestamp() // 60)
    return f"{course.changed_at.timestamp():.6f}-{runs_version}-{minute}-{chosen}"


def _current_exercise(
    exercises: list[Exercise], people: list[grid.Trainee], stand: dict[tuple[int, int], str]
) -> str:
    """Where the overview opens: the exercise the class is on (the first that someone
    has not done on every target), else the first; "all" only for a course without
    exercises. Every exercise at once is a link away, for a small class."""
    for exercise in exercises:
        if any(stand[(p.user_id, exercise.pk)] != "done" for p in people):
            return exercise.key
    return exercises[0].key if exercises else "all"


@login_required
def course_overview(request: HttpRequest, pk: int) -> HttpResponse:
    """The instructor's overview: where the class stands on each exercise, who needs
    help, and the grid and figures of one exercise (the class's current one unless
    the instructor chose another, or all of them for a small class).
    Polled every 3 s: a poll is a 304 while nothing moved, and otherwise brings only
    the rows and boxes that changed (portal/polling.py: changed_pieces)."""
    course = access.course_for_instructor(request.user, pk)
    # The exercise the instructor chose last on this course's overview is kept in their
    # session: a reset, an undo, a close or an edit returns to it.
    remembered = f"overview:{course.pk}:exercise"
    asked = request.GET.get("exercise") or request.session.get(remembered, "")
    held_stamp, held_content = held_version(request)
    runs_version = overview.overview_version(course) if course.is_open else None
    stamp = _overview_stamp(course, runs_version, asked)
    if request.htmx and stamp and held_stamp == stamp:
        return HttpResponseNotModified(headers={"ETag": f'"{stamp}/{held_content}"'})
    if (
        request.htmx
        and held_stamp
        and held_stamp.partition("-")[0] != (stamp or "").partition("-")[0]
    ):
        # The course was edited, closed or opened since the page was drawn: draw it again.
        return HttpResponse(headers={"HX-Refresh": "true"})
    # The course's exercises, targets and runs, each read once for the grid, the
    # counts, the list of who needs help and the class's figures.
    exercises = list(course.exercises.select_related("profile"))
    targets = list(course.targets.all())
    people = grid.trainees(course)
    allow_all = len(people) <= ALL_AT_ONCE_MAX_TRAINEES
    runs = overview.course_runs(course)
    cells = grid.cells_of(runs)
    stand = grid.standings(people, exercises, targets, cells)
    keys = [e.key for e in exercises]
    chosen = asked if asked in keys or (asked == "all" and allow_all) else ""
    if not chosen:
        chosen = _current_exercise(exercises, people, stand)
        stamp = _overview_stamp(course, runs_version, chosen)
    if request.GET.get("exercise") and request.session.get(remembered) != chosen:
        request.session[remembered] = chosen  # written when it changes, not at each poll
    shown = exercises if chosen == "all" else [e for e in exercises if e.key == chosen]
    class_table = overview.class_figures(course, exercises, targets, runs)
    measuring.say_unmeasured(course.profile_id, list(class_table.values()))
    predictions = overview.class_predictions(course)
    ctx = {
        "course": course,
        "exercises": exercises,
        "chosen": chosen,
        "allow_all": allow_all,
        "trainees": people,
        "columns": [(e, t) for e in shown for t in targets],
        "states": grid.STATES,
        "counts": [
            (e, [(state, label, counted[state]) for state, label in grid.STATES.items()])
            for e, counted in grid.counts(exercises, people, stand)
        ],
        "help": [
            (HELP_TITLES[kind], found, total, total - len(found))
            for kind, (found, total) in grid.needs_help(people, exercises, targets, cells).items()
        ],
        "waiting_minutes": grid.WAITING_HELP_MINUTES,
        "idle_minutes": grid.IDLE_HELP_MINUTES,
        "charts": [overview.class_chart(course, e, class_table, predictions) for e in shown],
        "polling": course.is_open,
    }
    ctx["help_count"] = sum(total for _, _, total, _ in ctx["help"])
    medians = {cell: f.class_median for cell, f in class_table.items()}
    rows = grid.rows(course, people, shown, targets, cells, stand, medians)
    pieces = {
        **rows,
        **{
            # No request: the boxes need no context processor (and would cost their queries).
            f"#{name}": render_to_string(f"courses/course_overview.html#{name}", ctx)
            for name in ("class-counts", "needs-help", "figures")
        },
    }
    content, fresh, held = changed_pieces(f"overview:{course.pk}", held_content, pieces)
    ctx["version"] = f"{stamp}/{content}" if stamp else None
    if not request.htmx:
        ctx["rows"] = mark_safe("".join(rows.values()))  # noqa: S308 -- built escaped (grid.py)
        ctx["undo"] = changes.undoable(request, course)  # only the whole page reads (and drops) it
        return render(request, "courses/course_overview.html", ctx)
    poll = render_to_string("courses/course_overview.html#overview-poll", ctx, request)
    response = HttpResponse(poll + _changes_markup(rows, pieces, fresh, held))
    return poll_answer(response, still_polling=course.is_open, version=ctx["version"])


def _changes_markup(
    rows: dict[str, str], pieces: dict[str, str], fresh: dict[str, str] | None, held: set[str]
) -> str:
    """What a poll swaps in besides its own element (HTMX out-of-band swaps): every
    row and box when the poller may hold anything; else the rows and boxes that
    changed, the rows of those who joined (added at the end: the grid is in joining
    order) and the removal of those who left. Table rows travel in <template>s: a
    browser parses a <tr> beside a <div> only inside one (htmx swaps their content)."""
    if fresh is None:
        boxes = [oob(markup) for key, markup in pieces.items() if key.startswith("#")]
        every_row = f'<tbody id="grid-rows" hx-swap-oob="true">{"".join(rows.values())}</tbody>'
        return "".join(boxes) + f"<template>{every_row}</template>"
    boxes = [oob(fresh[key]) for key in fresh if key.startswith("#")]
    changed = [oob(markup) for key, markup in fresh.items() if key in held and key in rows]
    joined = "".join(markup for key, markup in fresh.items() if key not in held and key in rows)
    left = [f'<tr id="{key}" hx-swap-oob="delete"></tr>' for key in sorted(held - set(pieces))]
    added = f'<tbody hx-swap-oob="beforeend:#grid-rows">{joined}</tbody>' if joined else ""
    table = "".join(changed) + "".join(left)
    return (
        "".join(boxes)
        + (f"<template>{table}</template>" if table else "")
        + (f"<template>{added}</template>" if added else "")
    )


# The projector refreshes its figures this often (a 304 while no run moved).
DISCUSSION_REFRESH_SECONDS = 10


@login_required
def course_discussion(request: HttpRequest, pk: int, key: str) -> HttpResponse:
    """One exercise's class figures and questions, for the projector: it refreshes
    itself, has a large-type view (?view=large), full screen, and steps to the
    previous or next exercise of the course."""
    course = access.course_for_instructor(request.user, pk)
    exercises = list(course.exercises.all())
    at = next((i for i, e in enumerate(exercises) if e.key == key), None)
    if at is None:
        raise NotFound("No such exercise in this course.")
    exercise = exercises[at]
    version = f"{overview.overview_version(course)}-{key}" if course.is_open else None
    if request.htmx and (not_modified := unchanged(request, version)):
        return not_modified
    large = request.GET.get("view") == "large"
    ctx = {
        "course": course,
        "exercise": exercise,
        "chart": overview.class_chart(
            course,
            exercise,
            overview.class_figures(course, exercises),
            overview.class_predictions(course),
        ),
        "previous": exercises[at - 1] if at > 0 else None,
        "next": exercises[at + 1] if at + 1 < len(exercises) else None,
        "position": at + 1,
        "total": len(exercises),
        "large": large,
        "view": "?view=large" if large else "",
        "polling": course.is_open,
        "version": version,
        "refresh_seconds": DISCUSSION_REFRESH_SECONDS,
    }
    if request.htmx:
        response = render(request, "courses/course_discussion.html#discussion-figures", ctx)
        return poll_answer(response, still_polling=course.is_open, version=version)
    return render(request, "courses/course_discussion.html", ctx)


EXPORT_FIELDS = [
    "participant", "cluster_account", "exercise", "target", "status", "write_mib_s",
    "write_mb_s", "write_iops", "processes", "slurm_job_id", "started", "ended",
    # Added with IOR's read-back and mdtest: after the first columns, which scripts read.
    "engine", "read_mib_s", "create_ops_s", "stat_ops_s", "read_ops_s", "remove_ops_s",
    # Where the participant predicted this target in this exercise (1: fastest).
    "predicted_place",
    # How many other runs shared its target (and node) while it ran (jobs/company.py),
    # and its write figure as a percentage of the site's quiet figure (quiet.py).
    "shared_with_runs", "percent_of_quiet",
]  # fmt: skip


def _figure(result: RunResult | None, field: str, digits: int) -> float | None:
    """A run's figure as people read it (jobs/figures.py), rounded for the export;
    empty for none, and for one that cannot be true."""
    value = result.figure(field) if result else None
    return None if value is None else round(value, digits)


def _export_rows(course: Course, predicted: dict[tuple[int, int], list[str]]) -> list[dict]:
    runs = annotated(  # what each shared, in the same query
        BenchmarkRun.objects.filter(course=course)
        .select_related("user", "exercise", "target", "result")
        .defer("job_script", "workload", "raw_output")  # a class's outputs: up to GiBs
        .order_by("user__username", "exercise__order", "target__order", "created_at")
    )
    runs = list(runs)
    quiets = quiet_figures(runs)
    rows = []
    for run in runs:
        result = getattr(run, "result", None)
        write_mib_s = _figure(result, "write_bytes_per_s", 2)
        # Against the figure of the write_mib_s column.
        said = shared(run, company(run), quiets, result.write_mib_s if result else None)
        iops = result.write_iops if result else None
        rows.append(
            {
                "participant": run.user.get_username(),
                "cluster_account": run.cluster_username,
                "exercise": run.exercise.key if run.exercise else "",
                "target": run.target.name,
                "status": run.status,
                "write_mib_s": write_mib_s,
                "write_mb_s": round(units.mb(result.write_bytes_per_s), 2)
                if write_mib_s is not None
                else None,
                "write_iops": round(iops, 1) if iops and math.isfinite(iops) else None,
                "processes": result.processes if result else None,
                "slurm_job_id": run.slurm_job_id,
                "started": run.started_at.isoformat() if run.started_at else None,
                "ended": run.ended_at.isoformat() if run.ended_at else None,
                "engine": run.engine,
                "read_mib_s": _figure(result, "read_bytes_per_s", 2),
                **{name: _figure(result, name, 1) for name in RATE_FIELDS},
                "predicted_place": _place(
                    predicted.get((run.user_id, run.exercise_id), []), run.target.key
                ),
                "shared_with_runs": said.company.runs if said else None,
                "percent_of_quiet": said.percent if said else None,
            }
        )
    return rows


def _place(order: list[str], key: str) -> int | None:
    return order.index(key) + 1 if key in order else None


def _predictions(course: Course, made: list[Prediction]) -> list[dict]:
    """The class's predictions, each as its participant made it (target names, fastest
    first)."""
    names = {t.key: t.name for t in course.targets.all()}
    return [
        {
            "participant": p.user.get_username(),
            "exercise": p.exercise.key,
            "order": [names.get(key, key) for key in p.order],
            "mib_s_guessed": {names.get(key, key): mib for key, mib in p.figures.items()},
            "made_at": p.made_at.isoformat(),
        }
        for p in made
    ]


def _cell(value: object) -> object:
    """No cell starts like a spreadsheet formula (CSV injection)."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@"):
        return "'" + value
    return value


@login_required
def course_export(request: HttpRequest, pk: int, fmt: str) -> HttpResponse:
    course = access.course_for_instructor(request.user, pk)
    made = list(
        overview.course_predictions(course)
        .select_related("user", "exercise")
        .order_by("user__username", "exercise__order")
    )
    rows = _export_rows(course, {(p.user_id, p.exercise_id): p.order for p in made})
    filename = f"storagelab-course-{course.pk}-results.{fmt}"
    if fmt == "json":
        body = {
            "course": course.title,
            "profile": course.profile.name,
            "runs": rows,
            "predictions": _predictions(course, made),
        }
        response: HttpResponse = JsonResponse(body, json_dumps_params={"indent": 2})
    else:
        response = HttpResponse(content_type="text/csv; charset=utf-8")
        writer = csv.DictWriter(response, fieldnames=EXPORT_FIELDS)
        writer.writeheader()
        writer.writerows({k: _cell(v) for k, v in row.items()} for row in rows)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
