"""Runs beyond a cap wait for a free slot instead of being refused, repeats in one
click, and what the lab and the instructor see of it. (How waiting runs start as
slots free up: tests/jobs/test_slots.py; on the live cluster:
tests/jobs/test_waiting_live.py.)"""

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from kombu.exceptions import OperationalError

from exercises.catalogue.models import SiteProfile, StorageTarget
from exercises.courses.models import Course, Enrollment
from exercises.lab.forms import StartRunsForm
from exercises.lab.start import StartRefused, start_runs
from jobs.models import BenchmarkRun
from tests.quotas import fill
from tests.runs import make_run

pytestmark = pytest.mark.django_db

GiB, MiB = 2**30, 2**20
HTMX = {"HX-Request": "true", "HX-Target": "runs-panel"}


@pytest.fixture
def submitted(monkeypatch) -> list[int]:
    """The runs whose submission was enqueued (the broker stands aside)."""
    sent: list[int] = []
    monkeypatch.setattr("jobs.handover.submit_runs.delay", sent.extend)
    return sent


def targets(profile: SiteProfile, *keys: str) -> list[StorageTarget]:
    return [profile.targets.get(key=key) for key in keys]


def in_order(user) -> list[tuple[str, str]]:
    runs = BenchmarkRun.objects.filter(user=user).order_by("created_at", "pk")
    return list(runs.values_list("target__key", "status"))


def course_with_cap(profile: SiteProfile, cap: int, *keys: str) -> Course:
    course = Course.objects.create(title="Storage 101", profile=profile, max_active_runs=cap)
    course.exercises.set(profile.exercises.filter(key__in=["1a", "2a"]))
    course.targets.set(targets(profile, *keys))
    return course


def test_runs_beyond_the_users_cap_wait_and_only_the_others_reach_slurm(
    ada, dev_profile, settings, submitted, django_capture_on_commit_callbacks
) -> None:
    settings.MAX_ACTIVE_RUNS_PER_USER = 2
    exercise = dev_profile.exercises.get(key="1a")

    with django_capture_on_commit_callbacks(execute=True):
        runs = start_runs(ada, exercise, targets(dev_profile, "home", "global", "scratch", "tmp"))

    assert [(r.target.key, r.status) for r in runs] == [
        ("home", "queued"),
        ("global", "queued"),
        ("scratch", "waiting"),
        ("tmp", "waiting"),
    ]
    assert in_order(ada) == [(r.target.key, r.status) for r in runs]
    assert submitted == [runs[0].pk, runs[1].pk]


def test_repeats_go_target_by_target_then_again(ada, dev_profile, settings) -> None:
    """Every target gets its first figure early: A1, B1, A2, B2, A3, B3."""
    settings.MAX_ACTIVE_RUNS_PER_USER = 3
    exercise = dev_profile.exercises.get(key="1a")

    runs = start_runs(ada, exercise, targets(dev_profile, "scratch", "tmp"), repeat=3)

    assert in_order(ada) == [
        ("scratch", "queued"),
        ("tmp", "queued"),
        ("scratch", "queued"),
        ("tmp", "waiting"),
        ("scratch", "waiting"),
        ("tmp", "waiting"),
    ]
    assert [r.pk for r in runs] == list(
        BenchmarkRun.objects.order_by("created_at", "pk").values_list("pk", flat=True)
    )


def test_runs_already_waiting_go_before_a_new_clicks(ada, dev_profile, settings) -> None:
    settings.MAX_ACTIVE_RUNS_PER_USER = 1
    exercise = dev_profile.exercises.get(key="1a")
    start_runs(ada, exercise, targets(dev_profile, "home", "global"))

    later = start_runs(ada, exercise, targets(dev_profile, "tmp"))

    assert [r.status for r in later] == ["waiting"]
    assert in_order(ada) == [("home", "queued"), ("global", "waiting"), ("tmp", "waiting")]


def test_a_full_course_holds_its_runs_but_not_the_users_others(ada, dev_profile, settings) -> None:
    settings.MAX_ACTIVE_RUNS_PER_USER = 8
    Enrollment.objects.create(course=course_with_cap(dev_profile, 1, "scratch", "tmp"), user=ada)

    start_runs(ada, dev_profile.exercises.get(key="1a"), targets(dev_profile, "scratch", "tmp"))
    start_runs(ada, dev_profile.exercises.get(key="1a"), targets(dev_profile, "home"))

    # $HOME is in no course: it goes although $TMPDIR's run is older.
    assert in_order(ada) == [("scratch", "queued"), ("tmp", "waiting"), ("home", "queued")]


def test_beyond_the_waiting_cap_the_click_is_refused_and_nothing_is_saved(
    ada, dev_profile, settings
) -> None:
    settings.MAX_ACTIVE_RUNS_PER_USER = 2
    settings.MAX_WAITING_RUNS_PER_USER = 3
    exercise = dev_profile.exercises.get(key="1a")
    start_runs(ada, exercise, targets(dev_profile, "home", "global", "scratch"))  # 2 go, 1 waits

    with pytest.raises(StartRefused) as refused:
        start_runs(ada, exercise, targets(dev_profile, "scratch", "tmp"), repeat=3)

    assert str(refused.value).startswith(
        "This would leave 7 of your runs waiting for a free slot (1 wait already, and 6 "
        "more were asked for); at most 3 may wait."
    )
    assert BenchmarkRun.objects.filter(user=ada).count() == 3
    # Up to the cap is fine.
    assert len(start_runs(ada, exercise, targets(dev_profile, "scratch", "tmp"))) == 2


def test_a_quota_problem_refuses_every_run_of_the_click_waiting_or_not(
    ada, dev_profile, settings
) -> None:
    settings.MAX_ACTIVE_RUNS_PER_USER = 1
    fill(ada.cluster_account, "tmp", 2 * GiB - 8 * MiB, bytes_hard=2 * GiB)  # 1a writes 64 MiB

    with pytest.raises(StartRefused, match=r"needs 64 MiB on \$TMPDIR"):
        start_runs(ada, dev_profile.exercises.get(key="1a"), targets(dev_profile, "home", "tmp"))

    assert not BenchmarkRun.objects.exists()


@pytest.mark.parametrize("repeat", [0, 2, 6, -1])
def test_a_repeat_the_lab_does_not_offer_is_refused(ada, dev_profile, repeat: int) -> None:
    with pytest.raises(StartRefused, match=f"Runs repeat 1, 3, 5 times, not {repeat}"):
        start_runs(ada, dev_profile.exercises.get(key="1a"), targets(dev_profile, "tmp"), repeat)
    assert not BenchmarkRun.objects.exists()


@pytest.mark.parametrize(
    ("posted", "repeat"),
    [({}, 1), ({"repeat": "1"}, 1), ({"repeat": "3"}, 3), ({"repeat": "5"}, 5)],
)
def test_the_form_takes_once_3_or_5_times(dev_profile, posted: dict, repeat: int) -> None:
    form = StartRunsForm({"targets": ["tmp"], **posted}, targets=dev_profile.targets.all())
    assert form.is_valid(), form.errors
    assert form.cleaned_data["repeat"] == repeat


@pytest.mark.parametrize("value", ["2", "50", "x", "3.0"])
def test_any_other_repeat_is_an_error_and_starts_nothing(client: Client, ada, value: str) -> None:
    client.force_login(ada)

    response = client.post("/lab/1a/runs", {"targets": ["tmp"], "repeat": value})

    assert response.status_code == 400
    assert (
        f"{value} is not a number of runs the lab offers: run each target 1, 3 or 5 times."
        in response.content.decode()
    )
    assert not BenchmarkRun.objects.exists()


def test_the_form_offers_once_3_and_5_times(client: Client, ada) -> None:
    client.force_login(ada)

    page = client.get("/lab/1a/").content.decode()

    assert "Runs on each target" in page
    for value, label in (("1", "once"), ("3", "×3"), ("5", "×5")):
        assert f'name="repeat" value="{value}"' in page and label in page
    assert 'value="1" id="id_repeat_0" checked' in page  # once, unless chosen otherwise


def test_the_notice_says_how_many_started_and_how_many_wait(
    client: Client, ada, dev_profile, settings
) -> None:
    settings.MAX_ACTIVE_RUNS_PER_USER = 4
    client.force_login(ada)
    chosen = ["home", "global", "scratch", "tmp"]

    panel = client.post("/lab/1a/runs", {"targets": chosen, "repeat": "3"}, headers=HTMX)

    text = panel.content.decode()
    assert (
        "Started 1a on $HOME, $GLOBAL, $SCRATCH, $TMPDIR; 8 more wait for a free slot and "
        "start by themselves as your runs finish." in text
    )
    # Each waiting run says its place in line; the panel goes on polling.
    assert text.count("Waiting for a free slot") == 8
    assert "next to start" in text and "number 8 in line" in text
    assert 'hx-trigger="every 2s"' in text


def test_one_more_run_than_the_cap_waits_and_the_notice_says_so(
    client: Client, ada, settings
) -> None:
    settings.MAX_ACTIVE_RUNS_PER_USER = 1
    client.force_login(ada)

    page = client.post("/lab/1a/runs", {"targets": ["scratch", "tmp"]}, follow=True)

    assert (
        "Started 1a on $SCRATCH; 1 more waits for a free slot and starts by itself as your "
        "runs finish." in page.content.decode()
    )


def test_when_every_run_waits_the_notice_says_that(
    client: Client, ada, dev_profile, settings
) -> None:
    settings.MAX_ACTIVE_RUNS_PER_USER = 1
    make_run(ada.cluster_account, dev_profile.targets.get(key="home"), status="running")
    client.force_login(ada)

    panel = client.post("/lab/1a/runs", {"targets": ["tmp"], "repeat": "3"}, headers=HTMX)

    assert (
        "Your 3 runs of 1a wait for a free slot and start by themselves as your runs "
        "finish; nothing to do." in panel.content.decode()
    )


def test_repeats_within_the_cap_are_counted_per_target(client: Client, ada, settings) -> None:
    settings.MAX_ACTIVE_RUNS_PER_USER = 8
    client.force_login(ada)

    page = client.post("/lab/1a/runs", {"targets": ["scratch", "tmp"], "repeat": "3"}, follow=True)

    assert "Started 1a on $SCRATCH ×3, $TMPDIR ×3. Results appear below." in (page.content.decode())


def test_the_panel_polls_while_a_run_only_waits(client: Client, ada, dev_profile) -> None:
    exercise = dev_profile.exercises.get(key="1a")
    make_run(
        ada.cluster_account, dev_profile.targets.get(key="tmp"), exercise=exercise, status="waiting"
    )
    client.force_login(ada)

    panel = client.get("/lab/1a/", headers=HTMX)

    assert panel.status_code == 200 and 'hx-trigger="every 2s"' in panel.content.decode()


def test_the_instructor_sees_waiting_runs_as_such_and_cancels_them_with_the_rest(
    client: Client, ada, dev_profile, make_user, settings, submitted
) -> None:
    """A trainee over the course's cap: the grid shows their waiting run; "cancel runs"
    cancels it too, and the slots the others free start none of them."""
    instructor = make_user()
    instructor.user_permissions.add(Permission.objects.get(codename="teach_course"))
    course = course_with_cap(dev_profile, 1, "scratch", "tmp")
    course.instructors.add(instructor)
    Enrollment.objects.create(course=course, user=ada)
    start_runs(ada, dev_profile.exercises.get(key="1a"), targets(dev_profile, "scratch", "tmp"))
    client.force_login(instructor)

    grid = client.get(f"/courses/{course.pk}/overview").content.decode()

    assert '<span class="status waiting" title="Waiting for a free slot">waiting</span>' in grid
    assert "at most 1 runs per trainee at once (more wait for a free slot)" in grid

    client.post(f"/courses/{course.pk}/participants/{ada.pk}/cancel")

    assert in_order(ada) == [("scratch", "cancelled"), ("tmp", "cancelled")]


@pytest.mark.django_db(transaction=True)  # the enqueueing happens once the runs are committed
def test_with_the_task_queue_down_the_notice_says_the_started_runs_wait_for_it(
    client: Client, ada, settings, monkeypatch
) -> None:
    settings.MAX_ACTIVE_RUNS_PER_USER = 1

    def broker_down(run_ids: list[int]) -> None:
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr("jobs.handover.submit_runs.delay", broker_down)
    client.force_login(ada)

    panel = client.post("/lab/1a/runs", {"targets": ["scratch", "tmp"]}, headers=HTMX)

    assert "Started 1a on $SCRATCH, but the portal&#x27;s task queue is not answering" in (
        panel.content.decode()
    )
    assert in_order(ada) == [("scratch", "queued"), ("tmp", "waiting")]
