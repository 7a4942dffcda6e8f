"""What a run shared, where people read it: the run page (a fragment of the lab's), the
runs panel, the lesson, the course export and the class's figures. Runs' times and
nodes are set in the database, as the sync records them."""

import csv
import html
import io
from datetime import timedelta

import pytest
from django.utils import timezone

from exercises.calibration.models import Calibration
from exercises.catalogue.models import MeasuredReference, Metric
from exercises.courses.models import Enrollment
from jobs.models import BenchmarkRun, RunResult, RunStatus
from tests.courses import add_run, make_course, make_instructor
from tests.runs import make_run

pytestmark = pytest.mark.django_db

T0 = timezone.now() - timedelta(hours=1)
HX = {"HX-Request": "true"}


def ran(account, target, start: int, end: int, exercise=None, mib_s: float | None = None, **fields):
    """A completed run from `start` to `end` seconds after T0, on node c1."""
    run = make_run(
        account,
        target,
        exercise=exercise,
        status=RunStatus.COMPLETED,
        started_at=T0 + timedelta(seconds=start),
        ended_at=T0 + timedelta(seconds=end),
        node_names="c1",
        **fields,
    )
    if mib_s is not None:
        RunResult.objects.create(
            run=run, engine="fio", processes=1, write_bytes_per_s=mib_s * 2**20
        )
    return run


@pytest.fixture
def scene(dev_profile, make_user):
    """Ada's run of 1a on $GLOBAL at 577.7 MiB/s, beside 3 of her own and 4 of Bob's,
    and the calibration's quiet 996.0 MiB/s (round N)."""
    ada, bob = make_user("sl-shared-ada"), make_user("sl-shared-bob")
    exercise = dev_profile.exercises.get(key="1a")
    target = dev_profile.targets.get(key="global")
    calibration = Calibration.objects.create(profile=dev_profile, finished_at=T0)
    MeasuredReference.objects.create(
        exercise=exercise, target=target, metric=Metric.WRITE, calibration=calibration,
        median=996.0, low=950.0, high=1010.0, values=[950.0, 996.0, 1010.0], measured_at=T0,
    )  # fmt: skip
    run = ran(ada.cluster_account, target, 0, 10, exercise, mib_s=577.7)
    for i in range(3):
        ran(ada.cluster_account, target, 1 + i, 9, exercise)
    for i in range(4):
        ran(bob.cluster_account, target, 2 + i, 12, exercise)
    return {"ada": ada, "bob": bob, "run": run, "round": calibration.pk}


def company_page(client, run) -> str:
    response = client.get(f"/lab/runs/{run.key}/company", headers=HX)
    assert response.status_code == 286  # the run ended: nothing left to follow
    return response.content.decode()


def test_the_run_page_says_what_the_run_shared_and_how_it_stands_against_the_quiet_figure(
    client, scene
) -> None:
    client.force_login(scene["ada"])
    run = scene["run"]

    page = client.get(f"/jobs/runs/{run.key}/").content.decode()
    fragment = company_page(client, run)

    assert f'hx-get="/lab/runs/{run.key}/company"' in page
    assert (
        "7 other runs wrote to $GLOBAL while yours ran: 3 of them yours, 4 other trainees&#x27;."
        in fragment
    )
    assert (
        f"Yours is 58 % of the quiet 996.0 MiB/s of calibration round {scene['round']}" in fragment
    )
    assert "Shared storage is shared" in fragment and "exercise 7" in fragment
    # No other trainee's name or run reaches a trainee.
    assert scene["bob"].username not in fragment and 'id="companions"' not in fragment


def test_staff_see_which_runs_it_shared_with(client, scene, make_user) -> None:
    client.force_login(make_user(staff=True))

    fragment = company_page(client, scene["run"])

    assert (
        f"while {scene['ada'].username}&#x27;s ran: 3 of them {scene['ada'].username}" in fragment
    )
    assert fragment.count(scene["bob"].username) == 4
    assert fragment.count("/jobs/runs/") == 7


def test_another_trainee_is_told_there_is_no_such_run(client, scene, make_user) -> None:
    client.force_login(scene["bob"])

    response = client.get(f"/lab/runs/{scene['run'].key}/company")

    assert response.status_code == 404
    assert "No run of yours has this address" in response.content.decode()


def test_a_run_alone_says_so_and_without_a_quiet_figure_only_its_company(
    client, dev_profile, make_user
) -> None:
    ada = make_user("sl-alone-ada")
    client.force_login(ada)
    run = ran(ada.cluster_account, dev_profile.targets.get(key="home"), 0, 10, mib_s=3.0)

    fragment = company_page(client, run)

    assert "No other run of the portal&#x27;s wrote to $HOME while yours ran." in fragment
    assert "quiet" not in fragment


def test_the_runs_panel_says_it_under_the_runs_figure_within_its_queries(
    client, scene, django_assert_max_num_queries
) -> None:
    client.force_login(scene["ada"])
    client.get("/lab/1a/")  # the site's rows, kept by the process from then on

    # What each run shared is read with the runs: the page of test_lab_views.py's 8
    # queries, and 1 for the exercise that teaches the spread, since a run paid for it.
    with django_assert_max_num_queries(9):
        page = client.get("/lab/1a/").content.decode()

    assert "shared with 7 runs; 58 % of quiet" in page


def test_the_lesson_turns_a_crowded_run_into_teaching(client, scene) -> None:
    client.force_login(scene["ada"])
    home = scene["run"].exercise.profile.targets.get(key="home")
    ran(scene["ada"].cluster_account, home, 100, 110, scene["run"].exercise, mib_s=900.0)

    page = client.get("/lab/1a/").content.decode()

    assert "Your run of 1a on $GLOBAL shared $GLOBAL with 7 other runs and wrote 58 %" in page
    assert "Shared storage is shared: run it again when it is quiet" in page
    assert "the spread between runs is the lesson of exercise 7" in page


def test_a_lesson_not_shown_in_company_shows_the_sites_quiet_figures_of_the_same_pair(
    client, scene
) -> None:
    """Issue 57: in company, the lesson still teaches. Ada's $GLOBAL run shared and
    wrote 577.7 MiB/s, below her $HOME run's 900; the calibration's quiet figures of
    the same pair say what a quiet cluster shows."""
    client.force_login(scene["ada"])
    exercise = scene["run"].exercise
    home = exercise.profile.targets.get(key="home")
    MeasuredReference.objects.create(
        exercise=exercise, target=home, metric=Metric.WRITE, calibration_id=scene["round"],
        median=20.0, low=19.0, high=21.0, values=[19.0, 20.0, 21.0], measured_at=T0,
    )  # fmt: skip
    ran(scene["ada"].cluster_account, home, 100, 110, exercise, mib_s=900.0)

    page = html.unescape(client.get("/lab/1a/").content.decode())

    claim = "$GLOBAL, the place for job data, streams faster than $HOME"
    item = page[page.index(claim) :].split("</li>")[0]
    assert "they do not show it" in item
    assert "Your run of 1a on $GLOBAL shared $GLOBAL with 7 other runs and wrote 58 %" in item
    assert f"The site's quiet figures (calibration round {scene['round']}, " in item
    assert "1a on $GLOBAL 996.0 MiB/s, 1a on $HOME 20.0 MiB/s (50×): they show it." in item


def test_a_lesson_not_shown_alone_says_nothing_the_portal_knows_of_stood_in_its_way(
    client, scene
) -> None:
    """Alone on their targets, with no canary reading slow, the runs were disturbed by
    nothing the portal sees: the lesson says so, and to run both again."""
    bob = scene["bob"]
    client.force_login(bob)
    exercise = scene["run"].exercise
    home, global_ = (exercise.profile.targets.get(key=key) for key in ("home", "global"))
    BenchmarkRun.objects.filter(user=bob).delete()
    ran(bob.cluster_account, global_, 500, 510, exercise, mib_s=15.0)
    ran(bob.cluster_account, home, 520, 530, exercise, mib_s=20.0)

    page = client.get("/lab/1a/").content.decode()

    claim = "$GLOBAL, the place for job data, streams faster than $HOME"
    item = page[page.index(claim) :].split("</li>")[0]
    assert "they do not show it" in item and "Neither run shared its target" in item
    assert "Run both again." in item


def test_the_export_says_how_many_runs_shared_and_the_percent_of_quiet(
    client, dev_profile, make_user
) -> None:
    instructor = make_instructor(make_user)
    course = make_course(dev_profile, instructor, "Shared course")
    trainee = make_user("sl-export-ada")
    target = course.targets.get(key="scratch")
    MeasuredReference.objects.create(
        exercise=course.exercises.get(key="1a"), target=target, metric=Metric.WRITE,
        median=200.0, low=190.0, high=210.0,
    )  # fmt: skip
    first = add_run(trainee.cluster_account, course, "1a", "scratch", 150.0)
    second = add_run(trainee.cluster_account, course, "1a", "scratch", 100.0)
    BenchmarkRun.objects.filter(pk=first.pk).update(
        started_at=T0, ended_at=T0 + timedelta(seconds=9)
    )
    BenchmarkRun.objects.filter(pk=second.pk).update(
        started_at=T0 + timedelta(seconds=3), ended_at=T0 + timedelta(seconds=20)
    )
    client.force_login(instructor)

    rows = list(
        csv.DictReader(io.StringIO(client.get(f"/courses/{course.pk}/export.csv").content.decode()))
    )

    assert [(r["shared_with_runs"], r["percent_of_quiet"]) for r in rows] == [
        ("1", "75"),
        ("1", "50"),
    ]


def test_the_class_figures_say_how_many_runs_went_at_once(client, dev_profile, make_user) -> None:
    instructor = make_instructor(make_user)
    course = make_course(dev_profile, instructor, "At once course")
    for i, name in enumerate(("sl-once-a", "sl-once-b", "sl-once-c")):
        trainee = make_user(name)
        Enrollment.objects.create(course=course, user=trainee)
        run = add_run(trainee.cluster_account, course, "1a", "scratch", 100.0 + i)
        BenchmarkRun.objects.filter(pk=run.pk).update(
            started_at=T0 + timedelta(seconds=i), ended_at=T0 + timedelta(seconds=10)
        )
    client.force_login(instructor)

    overview = client.get(f"/courses/{course.pk}/overview?exercise=1a").content.decode()
    projector = client.get(f"/courses/{course.pk}/discussion/1a").content.decode()

    for page in (overview, projector):
        assert "median of 3 trainees' medians; " in page
        assert "up to 3 of the class's runs at once on this target" in page
