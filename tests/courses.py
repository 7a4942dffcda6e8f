"""Courses for tests: one with its exercises and targets, and a run of it."""

from exercises.courses.models import Course
from jobs.models import BenchmarkRun, RunResult, RunStatus
from tests.runs import make_run


def make_course(profile, instructor, title: str) -> Course:
    course = Course.objects.create(title=title, profile=profile)
    course.instructors.add(instructor)
    course.exercises.set(profile.exercises.filter(key__in=["1a", "2a"]))
    course.targets.set(profile.targets.filter(key__in=["scratch", "tmp"]))
    return course


def add_run(course, user, exercise, target, mib_s, status=RunStatus.COMPLETED) -> BenchmarkRun:
    exercise = course.exercises.get(key=exercise)
    run = make_run(
        user.cluster_account,
        course.targets.get(key=target),
        exercise=exercise,
        course=course,
        workload=exercise.workload.model_dump(mode="json"),
        status=status,
        slurm_job_id=4242,
    )
    if mib_s:
        RunResult.objects.create(
            run=run, engine="fio", processes=1, write_bytes_per_s=mib_s * 2**20
        )
    return run
