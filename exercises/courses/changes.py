"""What an instructor changes on a running course: whether it is open, its join code,
and who is in it: cancel a trainee's runs, reset them (their runs leave the course's
figures) or remove them (and their enrolment), each undone within UNDO_SECONDS.

A reset, a removal or closing the course asks first, on a page of its own, saying
what it will do. What
it did is kept in the instructor's session, signed and dated, so "Undo" puts back
exactly those runs (and the enrolment), and only within the time."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core import signing
from django.db import IntegrityError, transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from exercises.courses import access
from exercises.courses.models import Course, Enrollment, new_join_code
from jobs.models import BenchmarkRun
from jobs.submission import cancel_all

UNDO_MINUTES = 10
UNDO_SECONDS = UNDO_MINUTES * 60
UNDO_SALT = "courses.changes.undo"
ASKS_FIRST = ("reset", "remove")


def _undo_key(course: Course) -> str:
    return f"course-undo-{course.pk}"


@require_POST
@login_required
def participant_action(request: HttpRequest, pk: int, user_id: int, action: str) -> HttpResponse:
    """Cancel a trainee's unfinished runs; reset them (cancel, and take every run of
    theirs out of the course: the runs stay in their own lab); or remove the trainee
    (a reset, and their enrolment goes). A reset and a removal ask first."""
    course = access.course_for_instructor(request.user, pk)
    enrollment = access.enrollment_in(course, user_id)
    name = enrollment.user.get_username()
    runs = BenchmarkRun.objects.filter(course=course, user=enrollment.user)
    if action in ASKS_FIRST and request.POST.get("confirmed") != "yes":
        ctx = {
            "course": course,
            "name": name,
            "action": action,
            "runs": runs.count(),
            "undo_minutes": UNDO_MINUTES,
        }
        return render(request, "courses/participant_confirm.html", ctx)
    failed = cancel_all(runs)
    if failed:
        messages.error(request, f"Slurm could not cancel {failed} run(s) of {name}; try again.")
    if action == "cancel":
        if not failed:
            messages.info(request, f"{name}'s runs in this course are cancelled.")
        return redirect("courses:course-overview", pk=course.pk)
    with transaction.atomic():
        moved = list(runs.values_list("pk", flat=True))
        runs.update(course=None)
        if action == "remove":
            enrollment.delete()
    done = {"user": user_id, "name": name, "action": action, "runs": moved}
    request.session[_undo_key(course)] = signing.dumps(done, salt=UNDO_SALT)
    what = "removed from the course" if action == "remove" else "reset"
    messages.info(request, f"{name} is {what}: {len(moved)} run(s) left the course's figures.")
    return redirect("courses:course-overview", pk=course.pk)


def undoable(request: HttpRequest, course: Course) -> dict | None:
    """The reset or removal of this course the instructor may still undo, if any."""
    token = request.session.get(_undo_key(course))
    if token is None:
        return None
    try:
        done = signing.loads(token, salt=UNDO_SALT, max_age=UNDO_SECONDS)
        return done | {"minutes": UNDO_MINUTES}
    except signing.BadSignature:  # expired too
        request.session.pop(_undo_key(course), None)
        return None


@require_POST
@login_required
def course_undo(request: HttpRequest, pk: int) -> HttpResponse:
    """Puts back what the last reset or removal took out of the course: its runs
    still out of any course, and the enrolment."""
    course = access.course_for_instructor(request.user, pk)
    done = undoable(request, course)
    request.session.pop(_undo_key(course), None)
    if done is None:
        messages.error(
            request,
            f"Nothing to undo: a reset or a removal is undone within {UNDO_MINUTES} min.",
        )
        return redirect("courses:course-overview", pk=course.pk)
    with transaction.atomic():
        if done["action"] == "remove":
            Enrollment.objects.get_or_create(course=course, user_id=done["user"])
        back = BenchmarkRun.objects.filter(pk__in=done["runs"], user_id=done["user"], course=None)
        count = back.update(course=course)
    messages.info(request, f"Undone: {done['name']} and {count} run(s) are back in the course.")
    return redirect("courses:course-overview", pk=course.pk)


@require_POST
@login_required
def course_change(request: HttpRequest, pk: int, change: str) -> HttpResponse:
    """Close the course (no run counts for it any more, nobody joins; its figures
    stay; it asks first), open it again, or give it a new join code (the old one joins
    nobody)."""
    course = access.course_for_instructor(request.user, pk)
    now = timezone.now()
    if change == "close" and request.POST.get("confirmed") != "yes":
        ctx = {"course": course, "trainees": course.enrollments.count()}
        return render(request, "courses/course_close_confirm.html", ctx)
    if change == "close":
        course.closes_at = now
        said = f"{course.title} is closed: no new run counts for it; its figures stay."
    elif change == "reopen":
        course.closes_at = None
        course.opens_at = min(course.opens_at, now)
        said = f"{course.title} is open again."
    else:
        for _ in range(5):  # 32^8 codes: a clash is all but impossible, never fatal
            course.join_code = new_join_code()
            if not Course.objects.filter(join_code=course.join_code).exists():
                break
        said = f"The new join code is {course.join_code}; the old one joins nobody."
    try:
        course.save(update_fields=["closes_at", "opens_at", "join_code", "changed_at"])
    except IntegrityError:
        messages.error(request, "That join code was just taken: ask for a new one again.")
        return redirect("courses:course-overview", pk=course.pk)
    messages.info(request, said)
    return redirect("courses:course-overview", pk=course.pk)
