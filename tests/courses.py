"""Courses for tests: one with its exercises and targets, and a run of it."""

from datetime import timedelta
from random import Random

from django.contrib.auth.models import Permission, User
from django.utils import timezone

from exercises.courses.models import Course, Enrollment
from jobs.models import BenchmarkRun, RunResult, RunStatus
from portal.models import ClusterAccount
from tests.runs import make_run

SECOND = timedelta(seconds=1)


def make_instructor(make_user, cluster_username: str | None = None) -> User:
    """A login that may teach (the make_user fixture's callable)."""
    user = make_user(cluster_username)
    user.user_permissions.add(Permission.objects.get(codename="teach_course"))
    return user


def make_course(profile, instructor, title: str) -> Course:
    course = Course.objects.create(title=title, profile=profile)
    course.instructors.add(instructor)
    course.exercises.set(profile.exercises.filter(key__in=["1a", "2a"]))
    course.targets.set(profile.targets.filter(key__in=["scratch", "tmp"]))
    return course


def add_run(
    account: ClusterAccount,
    course: Course,
    exercise: str,
    target: str,
    mib_s: float | None,
    status: str = RunStatus.COMPLETED,
) -> BenchmarkRun:
    """A run of the account's in the course, of the exercise and on the target of these
    keys, with a result of `mib_s` MiB/s (none if None)."""
    exercise = course.exercises.get(key=exercise)
    run = make_run(
        account,
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


# A seeded class's figures per target, MiB/s (each trainee within ±20 % of these),
# times a factor per exercise: eight writers beat one, random 4 KiB writes lose.
SEEDED_MIB_S = {"home": 150, "global": 700, "scratch": 900, "tmp": 3000}
SEEDED_FACTOR = {"1b": 3.0, "2a": 0.08}


def seed_class(course, size: int, prefix: str) -> dict[str, list]:
    """A class of `size` trainees (no Unix accounts: nothing of theirs runs) who
    joined an hour ago and ran the course's exercises on each of its targets. Three
    of them are stuck: "failed" (their run on the last target failed), "waiting"
    (their runs have waited in Slurm for 25 minutes) and "idle" (no run at all).
    Returns those three and everyone, by name."""
    now = timezone.now()
    random = Random(size)  # noqa: S311 -- figures for a picture, not a secret
    users = User.objects.bulk_create(
        User(username=f"{prefix}-{i:03d}", password="!", first_name="Seeded") for i in range(size)
    )
    ClusterAccount.objects.bulk_create(
        ClusterAccount(user=u, username=f"{prefix}-{i:03d}") for i, u in enumerate(users)
    )
    Enrollment.objects.bulk_create(
        Enrollment(course=course, user=u, joined_at=now - timedelta(minutes=60) + i * SECOND)
        for i, u in enumerate(users)
    )
    failed, waiting, idle = users[7], users[42], users[150 % size]
    exercises, targets = list(course.exercises.all()), list(course.targets.all())
    runs, results = [], []
    for user in users:
        if user == idle:
            continue
        for exercise in exercises:
            for t in targets:
                status = RunStatus.COMPLETED
                if user == waiting:
                    status = RunStatus.PENDING
                elif user == failed and t == targets[-1]:
                    status = RunStatus.FAILED
                created = now - timedelta(minutes=25 if user == waiting else 40)
                run = BenchmarkRun(
                    user=user,
                    cluster_username=user.username,
                    target=t,
                    exercise=exercise,
                    course=course,
                    target_directory="/seeded",
                    workload=exercise.workload.model_dump(mode="json"),
                    time_limit_minutes=2,
                    result_token_hash="x",
                    status=status,
                    status_reason="fio: No space left on device" if status == "failed" else "",
                    created_at=created,
                    updated_at=created,
                )
                runs.append(run)
                if status == RunStatus.COMPLETED:
                    mib_s = SEEDED_MIB_S.get(t.key, 500) * SEEDED_FACTOR.get(exercise.key, 1)
                    mib_s *= random.uniform(0.8, 1.2)
                    results.append((run, mib_s))
    BenchmarkRun.objects.bulk_create(runs)
    RunResult.objects.bulk_create(
        RunResult(run=run, engine="fio", processes=1, write_bytes_per_s=mib_s * 2**20)
        for run, mib_s in results
    )
    return {"failed": failed, "waiting": waiting, "idle": idle, "everyone": users}
