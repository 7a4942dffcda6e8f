"""The calibration page: who may see and use it (instructors and staff), starting and
cancelling a round, its polled progress, and the measured reference beside the
published one on the pages that compare."""

import pytest
from django.contrib.auth.models import Permission
from django.utils import timezone

from exercises.calibration.models import Calibration
from exercises.calibration.rounds import start_round
from exercises.catalogue.models import MeasuredReference, ReferenceResult, Unit
from exercises.courses.models import Course
from jobs.models import BenchmarkRun, RunResult, RunStatus

pytestmark = pytest.mark.django_db


def start(client, profile, repeat: str, confirmed: bool = True, **choices: list[str]):
    """The calibration form sent back, every exercise and target of `profile` checked
    unless `choices` say which; `confirmed`: the confirmation's button."""
    data = {
        "exercises": choices.get("exercises", [e.key for e in profile.exercises.all()]),
        "targets": choices.get("targets", [t.key for t in profile.targets.all()]),
        "repeat": repeat,
    }
    if confirmed:
        data["confirmed"] = "on"
    return client.post("/lab/calibration/start", data, follow=True)


@pytest.fixture
def people(make_user) -> dict:
    teach = Permission.objects.get(codename="teach_course")
    instructor, calibrating = make_user("sl-calib-inst"), make_user("sl-calib-inst2")
    instructor.user_permissions.add(teach)
    calibrating.user_permissions.add(teach, Permission.objects.get(codename="run_calibration"))
    return {
        "trainee": make_user("sl-calib-tr"),
        "instructor": instructor,
        "calibrating instructor": calibrating,
        "staff": make_user("sl-calib-staff", staff=True),
    }


@pytest.mark.parametrize(
    ("who", "sees", "starts"),
    [
        ("trainee", False, False),
        ("instructor", True, False),
        ("calibrating instructor", True, True),
        ("staff", True, True),
    ],
)
def test_only_staff_and_whom_they_let_start_a_round(client, dev_profile, people, who, sees, starts):
    """A round is up to a hundred and more jobs whose figures become the site's
    reference: staff start one, or whom they give "Can calibrate the site"."""
    client.force_login(people[who])

    page = client.get("/lab/calibration/")
    started = client.post(
        "/lab/calibration/start",
        {"exercises": ["1a"], "targets": ["home"], "repeat": "1", "confirmed": "on"},
    )

    assert page.status_code == (200 if sees else 403)
    if sees:
        assert "Calibration: Dev" in page.content.decode()
        assert ('action="/lab/calibration/start"' in page.content.decode()) == starts
    assert started.status_code == (302 if starts else 403)
    assert Calibration.objects.count() == (1 if starts else 0)


def test_only_its_starter_or_staff_cancel_a_round(client, dev_profile, people) -> None:
    round_ = start_round(people["calibrating instructor"], dev_profile, repeat=1)
    client.force_login(people["instructor"])  # another instructor

    assert "Cancel this calibration" not in client.get("/lab/calibration/").content.decode()
    assert client.post(f"/lab/calibration/{round_.pk}/cancel").status_code == 403
    round_.refresh_from_db()
    assert round_.finished_at is None

    client.force_login(people["calibrating instructor"])
    assert client.post(f"/lab/calibration/{round_.pk}/cancel").status_code == 302
    round_.refresh_from_db()
    assert round_.finished_at is not None


def test_a_trainee_cannot_cancel_a_round(client, dev_profile, people) -> None:
    round_ = start_round(people["staff"], dev_profile, repeat=1, exercise_keys=["1a"])
    client.force_login(people["trainee"])

    assert client.post(f"/lab/calibration/{round_.pk}/cancel").status_code == 403

    round_.refresh_from_db()
    assert round_.finished_at is None


def test_an_anonymous_visitor_is_sent_to_log_in(client, dev_profile) -> None:
    response = client.get("/lab/calibration/")
    assert response.status_code == 302 and "/login" in response["Location"]


def test_the_navigation_links_it_for_staff_only(client, dev_profile, people) -> None:
    client.force_login(people["staff"])
    assert 'href="/lab/calibration/"' in client.get("/lab/").content.decode()
    client.force_login(people["trainee"])
    assert 'href="/lab/calibration/"' not in client.get("/lab/").content.decode()


def test_starting_shows_the_round_going_and_polls_it(client, dev_profile, people) -> None:
    client.force_login(people["calibrating instructor"])

    page = start(client, dev_profile, "3").content.decode()

    round_ = Calibration.objects.get()
    total = dev_profile.exercises.count() * dev_profile.targets.count() * 3
    assert f"Calibration started: {total} runs" in page
    assert f"0 of {total}</strong> runs ended, 2 going" in page
    assert 'hx-trigger="every 2s"' in page and "Cancel this calibration" in page
    assert round_.repeat == 3 and round_.runs.first().cluster_username == "sl-calib-inst2"

    headers = {"HX-Request": "true"}
    poll = client.get("/lab/calibration/", headers=headers)
    assert poll.status_code == 200 and poll.content.decode().lstrip().startswith(
        '<section id="round-progress"'
    )
    assert (
        client.get(
            "/lab/calibration/", headers=headers | {"If-None-Match": poll["ETag"]}
        ).status_code
        == 304
    )

    # Cancelled: the poll's last answer (286) shows the summary and stops.
    client.post(f"/lab/calibration/{round_.pk}/cancel")
    last = client.get("/lab/calibration/", headers=headers)
    assert last.status_code == 286 and "Cancelled by" in last.content.decode()
    assert not BenchmarkRun.objects.filter(status=RunStatus.QUEUED).exists()


def test_a_second_round_and_a_bad_repeat_are_refused_with_a_reason(client, dev_profile, people):
    client.force_login(people["staff"])
    start(client, dev_profile, "1")

    again = start(client, dev_profile, "1").content.decode()
    odd = start(client, dev_profile, "7").content.decode()

    assert "is still going" in again
    assert "Choose how often each run repeats: 1, 3 or 5 times." in odd
    assert Calibration.objects.count() == 1


def test_without_a_cluster_account_the_page_says_what_to_do(client, dev_profile, make_user):
    client.force_login(make_user(staff=True))

    page = client.get("/lab/calibration/").content.decode()
    refused = start(client, dev_profile, "1")

    assert "Your login has no cluster account" in page and "See what it costs" not in page
    assert "has no cluster account" in refused.content.decode()
    assert not Calibration.objects.exists()


@pytest.fixture
def measured_1a_home(dev_profile) -> MeasuredReference:
    exercise = dev_profile.exercises.get(key="1a")
    target = dev_profile.targets.get(key="home")
    ReferenceResult.objects.update_or_create(
        exercise=exercise, target=target, metric="write",
        defaults={"value": 864.0, "unit": Unit.MB_S, "source": "test talk"},
    )  # fmt: skip
    when = timezone.make_aware(timezone.datetime(2026, 5, 4, 12, 0))
    return MeasuredReference.objects.create(
        exercise=exercise, target=target, values=[80.0, 91.34, 120.0],
        median=91.34, low=80.0, high=120.0, measured_at=when,
    )  # fmt: skip


def test_the_measured_reference_is_shown_beside_the_published_one(
    client, dev_profile, people, measured_1a_home
) -> None:
    client.force_login(people["trainee"])

    lab = client.get("/lab/1a/").content.decode()
    target = client.get("/storage/home/").content.decode()

    for page in (lab, target):
        assert "Site reference (as published)" in page and ">Measured here</abbr>" in page
        assert '91.3 (80.0–120.0)<br><small class="muted">2026-05-04</small>' in page
    assert '"Measured here (calibration' in lab  # the chart's data
    assert "91.34" in lab.split('id="comparison-data"')[1].split("</script>")[0]


def test_every_table_of_measured_figures_names_the_round_they_come_from(
    client, dev_profile, people, measured_1a_home
) -> None:
    done = Calibration.objects.create(
        profile=dev_profile, repeat=3, exercise_keys=["1a"], finished_at=timezone.now()
    )
    MeasuredReference.objects.filter(pk=measured_1a_home.pk).update(calibration=done)
    course = Course.objects.create(title="Sourced course", profile=dev_profile)
    course.instructors.add(people["instructor"])
    course.exercises.set(dev_profile.exercises.filter(key="1a"))
    course.targets.set(dev_profile.targets.filter(key="home"))
    client.force_login(people["instructor"])

    pages = [client.get(url).content.decode() for url in ("/lab/1a/", "/storage/home/")]
    pages.append(client.get(f"/courses/{course.pk}/overview").content.decode())

    source = f'91.3 (80.0–120.0)<br><small class="muted">calibration round {done.pk}, 2026-05-04'
    assert all(source in page for page in pages), [source in page for page in pages]


def test_the_calibration_page_lists_the_measured_references(
    client, dev_profile, people, measured_1a_home
) -> None:
    client.force_login(people["staff"])

    page = client.get("/lab/calibration/").content.decode()

    assert "91.3 MiB/s" in page and "80.0–120.0" in page and "2026-05-04" in page
    assert "864 MB/s (824 MiB/s)" in page  # published, in its own unit


def test_the_course_overview_shows_it_too(client, dev_profile, people, measured_1a_home):
    course = Course.objects.create(title="Calibrated course", profile=dev_profile)
    course.instructors.add(people["instructor"])
    course.exercises.set(dev_profile.exercises.filter(key="1a"))
    course.targets.set(dev_profile.targets.filter(key="home"))
    client.force_login(people["instructor"])

    page = client.get(f"/courses/{course.pk}/overview").content.decode()

    assert (
        ">Measured here</abbr>" in page
        and '91.3 (80.0–120.0)<br><small class="muted">2026-05-04</small>' in page
    )


def test_a_calibrations_runs_are_not_the_starters_own_runs(client, dev_profile, people) -> None:
    staff = people["staff"]
    round_ = start_round(staff, dev_profile, repeat=1, exercise_keys=["1a"], target_keys=["tmp"])
    run = round_.runs.get()
    BenchmarkRun.objects.filter(pk=run.pk).update(status=RunStatus.COMPLETED)
    RunResult.objects.create(run=run, engine="fio", processes=1, write_bytes_per_s=2**30)
    client.force_login(staff)

    lab = client.get("/lab/1a/").content.decode()
    target = client.get("/storage/tmp/").content.decode()

    assert str(run.key) not in lab and "No runs yet" in lab
    assert "1024.0 (" not in lab and "1024.0 (" not in target
    assert "of 7 targets" in client.get("/lab/").content.decode()


def earlier_run(profile, user, exercise_key: str, target_key: str, seconds: int) -> None:
    ended = timezone.now()
    BenchmarkRun.objects.create(
        user=user, cluster_username="sl-x", target=profile.targets.get(key=target_key),
        exercise=profile.exercises.get(key=exercise_key), target_directory="/x",
        workload={}, time_limit_minutes=10, result_token_hash="x", status=RunStatus.COMPLETED,
        started_at=ended - timezone.timedelta(seconds=seconds), ended_at=ended,
    )  # fmt: skip


def test_the_choice_comes_back_with_its_cost_and_nothing_starts(
    client, dev_profile, people, settings
) -> None:
    """1a ran here on $HOME, in 50 and 70 s: 60 s there, and on $TMPDIR, where it never
    ran. 2a never ran: its 2 s and a start-up, 22 s. With a sync cycle of 2 s each,
    three runs of each of the four pairs, two at a time: (62 + 62 + 24 + 24) × 3 / 2 =
    258 s, about 5 min."""
    settings.CALIBRATION_PARALLEL = 2
    settings.SYNC_INTERVAL_SECONDS = 2
    for seconds in (50, 70):
        earlier_run(dev_profile, people["trainee"], "1a", "home", seconds)
    client.force_login(people["staff"])

    page = start(
        client, dev_profile, "3", confirmed=False, exercises=["1a", "2a"], targets=["home", "tmp"]
    ).content.decode()

    limit = dev_profile.exercises.get(key="1a").time_limit_minutes  # 2a's too
    assert "<strong>12 jobs</strong>: 2 exercises × 2 targets × 3, 2 at a time" in page
    assert f"About <strong>5 min</strong>, at most {12 * limit // 2} min" in page
    assert "3 of these pairs never ran here before" in page
    assert "Start 12 jobs</button>" in page
    assert not Calibration.objects.exists()


def test_the_confirmation_starts_exactly_the_chosen_exercises_and_targets(
    client, dev_profile, people
) -> None:
    client.force_login(people["staff"])

    page = start(client, dev_profile, "1", exercises=["1a", "2a"], targets=["tmp"])

    round_ = Calibration.objects.get()
    assert (round_.exercise_keys, round_.target_keys, round_.repeat) == (["1a", "2a"], ["tmp"], 1)
    assert "Calibration started: 2 runs" in page.content.decode()


def test_a_choice_without_an_exercise_says_so_and_starts_nothing(
    client, dev_profile, people
) -> None:
    client.force_login(people["staff"])

    page = start(client, dev_profile, "1", exercises=[]).content.decode()

    assert "Choose at least one exercise to calibrate." in page
    assert not Calibration.objects.exists()
