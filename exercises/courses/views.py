"""Course pages: joining, the trainee's checklist, the instructor's live overview,
the discussion view and the exports. Who may see what: exercises/courses/access.py."""

import csv
import math

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from exercises.catalogue.profiles import active_profile
from exercises.courses import access, changes, overview
from exercises.courses.forms import CourseForm, JoinCourseForm
from exercises.courses.models import Course, Enrollment
from jobs.engines.base import RATE_FIELDS, plausible, plausible_rate
from jobs.models import BenchmarkRun, RunResult
from portal import units
from portal.models import ClusterAccount
from portal.permissions import only_if
from portal.polling import poll_answer, unchanged


@login_required
def course_list(request: HttpRequest) -> HttpResponse:
    ctx = {
        "enrollments": request.user.enrollments.select_related("course"),
        "taught": access.taught_by(request.user) if access.can_teach(request.user) else [],
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
            )
            course.instructors.add(request.user)
            course.exercises.set(profile.exercises.filter(key__in=form.cleaned_data["exercises"]))
            course.targets.set(profile.targets.filter(key__in=form.cleaned_data["targets"]))
        messages.info(request, f"Course created. Trainees join with the code {course.join_code}.")
        return redirect("courses:course-overview", pk=course.pk)
    status = 400 if form.is_bound else 200
    return render(request, "courses/course_form.html", {"form": form}, status=status)


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
    ctx = {
        "course": course,
        "targets": targets,
        "checklist": [(e, [(t, (e.pk, t.pk) in done) for t in targets]) for e in exercises],
        "charts": [overview.class_chart(course, e, class_table) for e in exercises],
    }
    return render(request, "courses/course_detail.html", ctx)


@login_required
def course_overview(request: HttpRequest, pk: int) -> HttpResponse:
    course = access.course_for_instructor(request.user, pk)
    # Polled every 3 s while the course is open; a closed one is drawn a last time.
    version = overview.overview_version(course) if course.is_open else None
    if request.htmx and (not_modified := unchanged(request, version)):
        return not_modified
    # The course's exercises, targets and runs, each read once for the grid and the
    # class's figures: the instructor of a class of 200 polls this every 3 s.
    exercises = list(course.exercises.select_related("profile"))
    targets = list(course.targets.all())
    runs = overview.class_runs(course)
    class_table = overview.class_figures(course, exercises, targets, runs)
    enrollments, columns, cells = overview.grid(course, exercises, targets, runs, class_table)
    ctx = {
        "course": course,
        "enrollments": enrollments,
        "columns": columns,
        "rows": overview.rows_html(enrollments, cells, columns),
        "charts": [overview.class_chart(course, e, class_table) for e in exercises],
        "polling": course.is_open,
        "version": version,
    }
    if request.htmx:
        response = render(request, "courses/course_overview.html#class-grid", ctx)
        return poll_answer(response, still_polling=course.is_open, version=version)
    # The polled grid has no Undo: only the whole page reads (and may drop) it.
    ctx["undo"] = changes.undoable(request, course)
    return render(request, "courses/course_overview.html", ctx)


@login_required
def course_discussion(request: HttpRequest, pk: int, key: str) -> HttpResponse:
    course = access.course_for_instructor(request.user, pk)
    exercise = get_object_or_404(course.exercises, key=key)
    chart = overview.class_chart(course, exercise, overview.class_figures(course))
    ctx = {"course": course, "exercise": exercise, "chart": chart}
    return render(request, "courses/course_discussion.html", ctx)


EXPORT_FIELDS = [
    "participant", "cluster_account", "exercise", "target", "status", "write_mib_s",
    "write_mb_s", "write_iops", "processes", "slurm_job_id", "started", "ended",
    # Added with IOR's read-back and mdtest: after the first columns, which scripts read.
    "engine", "read_mib_s", "create_ops_s", "stat_ops_s", "read_ops_s", "remove_ops_s",
]  # fmt: skip


def _rate(result: RunResult | None, name: str) -> float | None:
    """A file operation rate that can be true, else empty (as bandwidths are)."""
    value = getattr(result, name, None)
    return round(value, 1) if result and plausible_rate(value, result.processes) else None


def _export_rows(course: Course) -> list[dict]:
    runs = (
        BenchmarkRun.objects.filter(course=course)
        .select_related("user", "exercise", "target", "result")
        .defer("job_script", "workload", "raw_output")  # a class's outputs: up to GiBs
        .order_by("user__username", "exercise__order", "target__order", "created_at")
    )
    rows = []
    for run in runs:
        result = getattr(run, "result", None)
        # A figure that cannot be true (a row from before parsers checked) is left empty.
        bytes_per_s = result.write_bytes_per_s if result else None
        if not plausible(bytes_per_s, result.processes if result else None):
            bytes_per_s = None
        iops = result.write_iops if result else None
        read = result.read_bytes_per_s if result else None
        if not plausible(read, result.processes if result else None):
            read = None
        rows.append(
            {
                "participant": run.user.get_username(),
                "cluster_account": run.cluster_username,
                "exercise": run.exercise.key if run.exercise else "",
                "target": run.target.name,
                "status": run.status,
                "write_mib_s": round(units.mib(bytes_per_s), 2) if bytes_per_s else None,
                "write_mb_s": round(units.mb(bytes_per_s), 2) if bytes_per_s else None,
                "write_iops": round(iops, 1) if iops and math.isfinite(iops) else None,
                "processes": result.processes if result else None,
                "slurm_job_id": run.slurm_job_id,
                "started": run.started_at.isoformat() if run.started_at else None,
                "ended": run.ended_at.isoformat() if run.ended_at else None,
                "engine": run.engine,
                "read_mib_s": round(units.mib(read), 2) if read else None,
                **{name: _rate(result, name) for name in RATE_FIELDS},
            }
        )
    return rows


def _cell(value: object) -> object:
    """No cell starts like a spreadsheet formula (CSV injection)."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@"):
        return "'" + value
    return value


@login_required
def course_export(request: HttpRequest, pk: int, fmt: str) -> HttpResponse:
    course = access.course_for_instructor(request.user, pk)
    rows = _export_rows(course)
    filename = f"storagelab-course-{course.pk}-results.{fmt}"
    if fmt == "json":
        body = {"course": course.title, "profile": course.profile.name, "runs": rows}
        response: HttpResponse = JsonResponse(body, json_dumps_params={"indent": 2})
    else:
        response = HttpResponse(content_type="text/csv; charset=utf-8")
        writer = csv.DictWriter(response, fieldnames=EXPORT_FIELDS)
        writer.writeheader()
        writer.writerows({k: _cell(v) for k, v in row.items()} for row in rows)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
