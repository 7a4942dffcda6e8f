"""exercises/lab/start.py: every caller of start_runs gets the lab's rules, and a refusal
starts nothing (the views' messages are tested with the views; runs beyond a cap,
repeats and the waiting cap: test_start_waiting.py)."""

import threading

import pytest
from django.db import connection

from exercises.catalogue.models import SiteProfile, StorageTarget
from exercises.courses.models import Course, Enrollment
from exercises.lab.start import StartRefused, start_runs
from jobs.models import BenchmarkRun, RunStatus
from tests.runs import make_run

pytestmark = pytest.mark.django_db


def targets(profile: SiteProfile, *keys: str) -> list[StorageTarget]:
    return [profile.targets.get(key=key) for key in keys]


def test_it_starts_one_run_per_target(ada, dev_profile) -> None:
    exercise = dev_profile.exercises.get(key="2a")

    runs = start_runs(ada, exercise, targets(dev_profile, "scratch", "tmp"))

    assert [(r.target.key, r.exercise, r.status) for r in runs] == [
        ("scratch", exercise, RunStatus.QUEUED),
        ("tmp", exercise, RunStatus.QUEUED),
    ]
    assert runs[0].workload == exercise.workload.model_dump(mode="json")


@pytest.mark.parametrize(
    ("key", "engine", "read_back"),
    [("1a", "fio", False), ("1b-ior", "ior", False), ("5b", "ior", True), ("6", "mdtest", False)],
)
def test_runs_use_the_engine_the_exercise_names_else_the_sites(
    ada, dev_profile, key: str, engine: str, read_back: bool
) -> None:
    assert dev_profile.engine == "fio"

    (run,) = start_runs(ada, dev_profile.exercises.get(key=key), targets(dev_profile, "tmp"))

    assert run.engine == engine
    assert run.workload_params.read_back == read_back


def test_a_spread_exercise_runs_where_its_target_spreads_files_and_elsewhere_as_usual(
    ada, dev_profile
) -> None:
    name = ada.cluster_account.username
    spread, one_server = (dev_profile.exercises.get(key=k) for k in ("10b", "10a"))

    runs = start_runs(ada, spread, targets(dev_profile, "work", "global"))
    (usual,) = start_runs(ada, one_server, targets(dev_profile, "work"))

    # $WORK's sharded volume; $GLOBAL lays a file out one way only: its usual place.
    assert [r.target_directory for r in runs] == [
        f"/gluster-wide/{name}",
        f"/srv/storagelab/global/{name}",
    ]
    assert usual.target_directory == f"/gluster/{name}"


def test_a_target_of_another_site_is_refused(ada, dev_profile, disk_target) -> None:
    exercise = dev_profile.exercises.get(key="1a")

    with pytest.raises(StartRefused, match="is not a storage target of"):
        start_runs(ada, exercise, [*targets(dev_profile, "tmp"), disk_target])

    assert not BenchmarkRun.objects.exists()


def test_no_target_is_refused(ada, dev_profile) -> None:
    with pytest.raises(StartRefused, match="Choose at least one"):
        start_runs(ada, dev_profile.exercises.get(key="1a"), [])


def test_runs_count_for_the_open_course_and_wait_beyond_its_cap(ada, dev_profile) -> None:
    exercise = dev_profile.exercises.get(key="1a")
    course = Course.objects.create(title="Storage 101", profile=dev_profile, max_active_runs=2)
    course.exercises.add(exercise)
    course.targets.set(targets(dev_profile, "scratch", "tmp"))
    Enrollment.objects.create(course=course, user=ada)

    runs = start_runs(ada, exercise, targets(dev_profile, "home", "scratch"))
    assert [r.course for r in runs] == [None, course]  # $HOME is not in the course

    make_run(ada.cluster_account, runs[1].target, course=course, status=RunStatus.RUNNING)
    (waiting,) = start_runs(ada, exercise, targets(dev_profile, "tmp"))
    assert (waiting.course, waiting.status) == (course, RunStatus.WAITING)
    assert BenchmarkRun.objects.count() == 4


@pytest.mark.django_db(transaction=True)
def test_clicks_at_once_cannot_pass_the_caps_together(
    dev_profile, make_user, settings, monkeypatch
) -> None:
    """Four tabs start three runs each at the same moment, with room for four runs
    going and five waiting: four go, five wait, one click is told why, never more."""
    settings.MAX_ACTIVE_RUNS_PER_USER = 4
    settings.MAX_WAITING_RUNS_PER_USER = 5
    monkeypatch.setattr("jobs.handover.submit_runs.delay", lambda run_ids: None)
    ada = make_user("sl-ada")
    exercise = dev_profile.exercises.get(key="1a")
    chosen = targets(dev_profile, "home", "scratch", "tmp")
    line_up = threading.Barrier(4)
    outcomes = []

    def click() -> None:
        try:
            line_up.wait()
            outcomes.append(len(start_runs(ada, exercise, chosen)))
        except StartRefused:
            outcomes.append("refused")
        finally:
            connection.close()

    tabs = [threading.Thread(target=click) for _ in range(4)]
    for tab in tabs:
        tab.start()
    for tab in tabs:
        tab.join(timeout=30)

    assert sorted(outcomes, key=str) == [3, 3, 3, "refused"]
    statuses = list(BenchmarkRun.objects.filter(user=ada).values_list("status", flat=True))
    assert sorted(statuses) == ["queued"] * 4 + ["waiting"] * 5
