"""Starting runs of an exercise: the rules every caller goes through.

`start_runs` starts one run per chosen target, or none at all, and raises
StartRefused with what to tell the user. The rules, in this order:

1. the user has a cluster account (jobs run as it);
2. every target is one of the exercise's site;
3. the user's active runs stay within MAX_ACTIVE_RUNS_PER_USER;
4. the run's files fit in what is left of the user's quota on each target
   (the check itself: exercises/quota/checks.py);
5. each run counts for the first open course the user joined that teaches this
   exercise on that target, and stays within that course's cap per trainee.

The rules are checked and the runs saved in one transaction, holding the user's
cluster account row: two clicks at once cannot both pass a cap.
"""

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from exercises import courses
from exercises.models import Course, Exercise, StorageTarget
from exercises.quota.checks import quota_problem
from jobs.models import ACTIVE_STATUSES, BenchmarkRun
from jobs.submission import start_run
from portal.models import ClusterAccount


class StartRefused(Exception):
    """No run was started; the message says why and what to do."""


def start_runs(
    user: AbstractBaseUser, exercise: Exercise, targets: list[StorageTarget]
) -> list[BenchmarkRun]:
    """One run of `exercise` on each of `targets`, or StartRefused."""
    if not targets:
        raise StartRefused("Choose at least one storage target to run the exercise on.")
    foreign = [t.name for t in targets if t.profile_id != exercise.profile_id]
    if foreign:
        raise StartRefused(
            f"{', '.join(foreign)} is not a storage target of {exercise.profile.title}."
        )
    with transaction.atomic():
        account = ClusterAccount.objects.select_for_update().filter(user=user).first()
        if account is None:
            raise StartRefused(
                "Your portal login has no cluster account, so no job can run for you. "
                "Ask your instructor or the HPC support team to link one."
            )
        _check_user_cap(user, len(targets))
        problems = [quota_problem(account, target, exercise.workload) for target in targets]
        if any(problems):
            raise StartRefused(" ".join(p for p in problems if p))
        course_for = courses.open_courses_for(user, exercise, targets)
        _check_course_caps(user, [course_for[t.pk] for t in targets])
        return [
            start_run(
                account,
                target,
                exercise.workload,
                engine=exercise.runs_with,
                time_limit_minutes=exercise.time_limit_minutes,
                exercise=exercise,
                course=course_for[target.pk],
            )
            for target in targets
        ]


def _check_user_cap(user: AbstractBaseUser, asked: int) -> None:
    active = BenchmarkRun.objects.filter(user=user, status__in=ACTIVE_STATUSES).count()
    limit = settings.MAX_ACTIVE_RUNS_PER_USER
    if active + asked > limit:
        raise StartRefused(
            f"You have {active} run(s) still going and asked for {asked} more; at most "
            f"{limit} may run at once. Wait for some to finish, or cancel one, then try again."
        )


def _check_course_caps(user: AbstractBaseUser, plan: list[Course | None]) -> None:
    for course in {course for course in plan if course}:
        asked = plan.count(course)
        going = courses.active_runs_in(course, user)
        if going + asked > course.max_active_runs:
            raise StartRefused(
                f"In {course.title} each trainee may have {course.max_active_runs} run(s) "
                f"going at once; you have {going} and asked for {asked} more. Wait for some "
                "to finish, then try again."
            )
