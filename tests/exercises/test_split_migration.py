"""The split of the teaching domain into apps (exercises/migrations/0011 and the apps'
0001s): a database filled before it keeps every row, and every permission granted."""

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from exercises.calibration.models import Calibration
from exercises.catalogue.models import (
    Exercise,
    MeasuredReference,
    QuotaSource,
    ReferenceResult,
    SiteProfile,
    StorageTarget,
)
from exercises.courses.models import Course, Enrollment
from exercises.quotas.models import Quota
from jobs.models import BenchmarkRun, RunResult
from tests.names import unique_name

# main before the split: these and every migration of the other apps.
BEFORE = [
    ("exercises", "0010_exercise_time_direct_claims"),
    ("jobs", "0005_run_ingest_attempts"),
    # Its later migrations point at the runs as the split left them.
    ("jobio", "0002_check_job_id_read_started"),
    ("catalogue", None),
    ("quotas", None),
    ("courses", None),
    ("calibration", None),
    ("weather", None),  # made after the split
]


MOVED_TO = ("catalogue", "quotas", "courses", "calibration")


def migrate(targets: list[tuple[str, str | None]]):
    """Moves the database to `targets`; returns the models as they were there (every
    other app's at its latest)."""
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    graph = executor.loader.graph
    named = {app for app, _ in targets}
    state = [n for n in graph.leaf_nodes() if n[0] not in named] + [
        (app, migration) for app, migration in targets if migration
    ]
    return executor.loader.project_state(state).apps


def latest() -> list[tuple[str, str]]:
    return MigrationExecutor(connection).loader.graph.leaf_nodes()


def fill(old, name: str) -> None:
    """One of each row the split moves, made with the models as they were."""

    def model(label: str):
        return old.get_model(*label.split("."))

    # Content types as main had them before the split, whatever the test database
    # was made with: the moved models' under "exercises".
    moved = ("siteprofile", "storagetarget", "exercise", "referenceresult", "measuredreference")
    moved += ("quotasource", "calibration", "course", "enrollment", "quota")
    types = model("contenttypes.ContentType").objects.filter(model__in=moved)
    types.filter(app_label__in=MOVED_TO).update(app_label="exercises")
    user = model("auth.User").objects.create(username=name)
    teacher = model("auth.User").objects.create(username=f"{name}-t")
    teach = model("auth.Permission").objects.get(codename="teach_course")
    teacher.user_permissions.add(teach)
    account = model("portal.ClusterAccount").objects.create(user=user, username=name[:32])
    site = model("exercises.SiteProfile").objects.create(name=name[:32], title=name)
    target = model("exercises.StorageTarget").objects.create(
        profile=site, key="home", name="$HOME", filesystem="NFS", path_template="/h/{user}"
    )
    exercise = model("exercises.Exercise").objects.create(
        profile=site, key="1a", title="Streaming", goal="g", measures="m", how_to_read="h",
        pattern="sequential", block_size=2**20, processes=1, size_per_process=2**26,
    )  # fmt: skip
    model("exercises.ReferenceResult").objects.create(
        exercise=exercise, target=target, value=237.0, source="course, 2019"
    )
    round_ = model("exercises.Calibration").objects.create(profile=site, started_by=user)
    model("exercises.MeasuredReference").objects.create(
        exercise=exercise, target=target, calibration=round_, median=100, low=90, high=110
    )
    course = model("exercises.Course").objects.create(
        title=name, profile=site, join_code=name[-16:]
    )
    course.exercises.add(exercise)
    course.targets.add(target)
    course.instructors.add(teacher)
    model("exercises.Enrollment").objects.create(course=course, user=user)
    model("exercises.QuotaSource").objects.create(target=target, collector="local")
    model("exercises.Quota").objects.create(
        account=account, target=target, collector="local", bytes_used=2**30
    )
    run = model("jobs.BenchmarkRun").objects.create(
        user=user, cluster_username=name, target=target, exercise=exercise, course=course,
        calibration=round_, target_directory="/h/x", workload={}, time_limit_minutes=10,
        status="completed", result_token_hash="0" * 64,
    )  # fmt: skip
    model("jobs.RunResult").objects.create(
        run=run, engine="fio", processes=1, write_bytes_per_s=100 * 2**20
    )


@pytest.mark.django_db(transaction=True)
def test_a_database_filled_before_the_split_keeps_every_row_and_permission() -> None:
    name = unique_name("split")
    try:
        fill(migrate(BEFORE), name)
        migrate(latest())

        site = SiteProfile.objects.get(name=name[:32])
        target = StorageTarget.objects.get(profile=site)
        exercise = Exercise.objects.get(profile=site)
        assert ReferenceResult.objects.get(exercise=exercise, target=target).value == 237.0
        measured = MeasuredReference.objects.get(exercise=exercise)
        assert measured.calibration == Calibration.objects.get(profile=site)
        course = Course.objects.get(title=name)
        assert list(course.exercises.all()) == [exercise]
        assert list(course.targets.all()) == [target]
        assert Enrollment.objects.get(course=course).user.username == name
        assert QuotaSource.objects.get(target=target).collector == "local"
        assert Quota.objects.get(target=target).bytes_used == 2**30
        run = BenchmarkRun.objects.get(course=course)
        assert (run.target, run.exercise, run.calibration) == (
            target,
            exercise,
            measured.calibration,
        )
        assert RunResult.objects.get(run=run).write_mib_s == 100.0
        # The permission granted before is the one the portal checks now.
        teacher = User.objects.get(username=f"{name}-t")
        assert teacher.has_perm("courses.teach_course")
        assert list(course.instructors.all()) == [teacher]
    finally:
        migrate(latest())  # whatever failed, the next test finds today's schema
