"""Who may see a course, and which course a run counts for. Who may see what is
decided here, in one place: `course_for_trainee`, `course_for_instructor`; the pages
only some users see are guarded with portal/permissions.py: only_if(can_teach, ...)."""

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import F, QuerySet

from exercises.catalogue.models import Exercise, StorageTarget
from exercises.courses.models import Course
from portal.errors import NotFound


def can_teach(user: AbstractBaseUser) -> bool:
    return user.is_staff or user.has_perm("courses.teach_course")


def taught_by(user: AbstractBaseUser) -> QuerySet[Course]:
    courses = Course.objects.all()
    return courses if user.is_staff else courses.filter(instructors=user)


def course_for_instructor(user: AbstractBaseUser, pk: int) -> Course:
    course = taught_by(user).select_related("profile").filter(pk=pk).first()
    if course is None:
        raise NotFound("No such course among the ones you teach.")
    return course


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
