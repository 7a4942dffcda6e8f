"""Who may see a course, and which course a run counts for. Who may see what is
decided here, in one place: `course_for_trainee`, `course_for_instructor`; the pages
only some users see are guarded with portal/permissions.py: only_if(can_teach, ...).

Teaching takes the teach permission, now: an instructor listed in a course who lost it
(taken out of the site's instructors group, by hand or by the single sign-on at their
next login) keeps their place in the list and nothing of the instructor's: no
overview, projector, export, change of the course or of its trainees. Enrolled in it,
they still see the trainee's side."""

from datetime import timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import F, QuerySet
from django.utils import timezone

from exercises.catalogue.models import Exercise, StorageTarget
from exercises.courses.models import Course, Enrollment
from portal.errors import Forbidden, NotFound

NO_LONGER_TEACHING = (
    "You are not one of this site's instructors any more, so this course's instructor "
    "pages are closed to you. If you still teach it, ask the HPC support team to make you "
    "an instructor again."
)


# How long a trainee's lab says that a course of theirs closed.
CLOSED_NOTICE_DAYS = 14


def can_teach(user: AbstractBaseUser) -> bool:
    return user.is_staff or user.has_perm("courses.teach_course")


def taught_by(user: AbstractBaseUser) -> QuerySet[Course]:
    """The courses `user` teaches now: every one for staff; those listing them as an
    instructor while they may teach; none for anyone else."""
    if user.is_staff:
        return Course.objects.all()
    if not can_teach(user):
        return Course.objects.none()
    return Course.objects.filter(instructors=user)


def course_for_instructor(user: AbstractBaseUser, pk: int) -> Course:
    """A course `user` teaches now (taught_by), for every instructor's page and action;
    a 403 saying why for a former instructor still listed in it, else a 404."""
    course = taught_by(user).select_related("profile").filter(pk=pk).first()
    if course is None:
        if Course.objects.filter(pk=pk, instructors=user).exists():
            raise Forbidden(NO_LONGER_TEACHING)
        raise NotFound("No such course among the ones you teach.")
    return course


def enrollment_in(course: Course, user_id: int) -> Enrollment:
    """A trainee's enrolment in a course its instructor opened (course_for_instructor)."""
    enrollment = course.enrollments.select_related("user").filter(user_id=user_id).first()
    if enrollment is None:
        raise NotFound("No such trainee in this course: they may have been removed from it.")
    return enrollment


def course_for_trainee(user: AbstractBaseUser, pk: int) -> Course:
    """A course the user is enrolled in (instructors and staff may look too)."""
    course = Course.objects.select_related("profile").filter(pk=pk).first()
    allowed = course is not None and (
        course.enrollments.filter(user=user).exists() or taught_by(user).filter(pk=pk).exists()
    )
    if not allowed:
        raise NotFound("No such course among the ones you joined.")
    return course


def open_courses_for(
    user: AbstractBaseUser, exercise: Exercise, targets: list[StorageTarget]
) -> dict[int, Course | None]:
    """Target id -> the open course a new run of `exercise` on it counts for, if
    any: the first one joined among those teaching both (1 query: a course per row
    and target it teaches, where a prefetch of the targets took a second one and
    was a tenth of a start of runs)."""
    teaching = (
        Course.objects.filter(enrollments__user=user, exercises=exercise, targets__in=targets)
        .annotate(target_id=F("targets"))
        .order_by("enrollments__joined_at", "pk")
    )
    first: dict[int, Course] = {}
    for course in teaching:
        if course.is_open:
            first.setdefault(course.target_id, course)
    return {target.pk: first.get(target.pk) for target in targets}


def lately_closed_for(user: AbstractBaseUser) -> list[Course]:
    """The courses `user` joined that closed within CLOSED_NOTICE_DAYS, newest first:
    their runs no longer count for them, and their lab says so."""
    now = timezone.now()
    return list(
        Course.objects.filter(
            enrollments__user=user,
            closes_at__lte=now,
            closes_at__gt=now - timedelta(days=CLOSED_NOTICE_DAYS),
        ).order_by("-closes_at")
    )
