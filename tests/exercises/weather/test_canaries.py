"""Canaries and their readings without the cluster: what a canary runs and how it is
bounded, one at a time on a target, stopped by Slurm's refusal, a reading taken from
its run's result (and marked when trainees' runs shared the target), retention, and
the command's stored readings."""

import io
import json
import socket
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from exercises.calibration.models import Calibration
from exercises.catalogue.models import MeasuredReference, Metric
from exercises.weather import canaries, readings
from exercises.weather.models import Kind, Reading
from jobs.engines import Pattern, Workload
from jobs.models import BenchmarkRun, RunResult, RunStatus
from portal.units import GiB, KiB, MiB
from tests.exercises.weather.weather import reading
from tests.quotas import fill
from tests.runs import make_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def canary(dev_profile, make_user, settings):
    user = make_user("sl-weather")
    settings.WEATHER_ACCOUNT = user.username
    return user.cluster_account


@pytest.fixture
def portal_up(live_server, settings) -> None:
    """The address jobs post their output to answers (the schedule asks it first)."""
    settings.PORTAL_CALLBACK_URL = live_server.url


def every_kind_due(target, kind, latest) -> bool:
    return True


def test_the_dev_sites_exercises_run_whole_and_a_large_one_is_cut(dev_profile) -> None:
    chosen = canaries.exercises(dev_profile)
    assert {kind: e.key for kind, e in chosen.items()} == {"streaming": "1a", "metadata": "6"}
    for exercise in chosen.values():
        assert canaries.bounded(exercise.workload) == exercise.workload

    large = Workload(
        pattern=Pattern.SEQUENTIAL, block_size=MiB, processes=64, size_per_process=8 * GiB,
        seconds=60,
    )  # fmt: skip
    cut = canaries.bounded(large)
    assert (cut.processes, cut.size_per_process, cut.seconds) == (8, 64 * MiB, 5)
    many = Workload(
        pattern=Pattern.SEQUENTIAL, block_size=16 * KiB, processes=1,
        size_per_process=1000 * 16 * KiB, files_per_process=1000,
    )  # fmt: skip
    assert canaries.bounded(many).files_per_process == 200


def test_a_setting_naming_no_fitting_exercise_is_refused(dev_profile, settings) -> None:
    settings.WEATHER_METADATA_EXERCISE = "1a"
    with pytest.raises(canaries.WeatherRefused, match="exercise 1a does not measure file"):
        canaries.exercises(dev_profile)
    settings.WEATHER_METADATA_EXERCISE = "nope"
    with pytest.raises(canaries.WeatherRefused, match="names exercise 'nope'"):
        canaries.exercises(dev_profile)


def test_a_target_gets_one_canary_at_a_time_with_the_calibrated_usual(canary, dev_profile) -> None:
    one_a = dev_profile.exercises.get(key="1a")
    global_ = dev_profile.targets.get(key="global")
    MeasuredReference.objects.create(
        exercise=one_a, target=global_, metric=Metric.WRITE, median=190.0, low=180, high=200
    )

    first = canaries.step(dev_profile, every_kind_due)
    again = canaries.step(dev_profile, every_kind_due)

    assert [(r.target.key, r.kind) for r in first.started] == [
        ("home", "streaming"), ("global", "streaming"), ("scratch", "streaming"),
        ("tmp", "streaming"), ("binfs", "streaming"), ("work", "streaming"),
        ("project", "streaming"),
    ]  # fmt: skip
    assert again.started == [] and len(again.going) == 7
    started = Reading.objects.get(target=global_)
    assert started.usual == 190.0 and started.exercise == one_a and not started.settled
    run = started.run
    assert run.cluster_username == "sl-weather" and run.exercise is None  # no trainee's figure
    assert run.workload == one_a.workload.model_dump(mode="json") and run.time_limit_minutes == 2


def test_a_canary_the_weather_accounts_quota_has_no_room_for_is_not_run_and_says_why(
    canary, dev_profile, settings
) -> None:
    """Canaries pass the quota every run passes (jobs/admission.py): on a target where
    the weather account's quota is full, nothing goes to Slurm, the reading says why,
    and the weather is not stopped (Slurm refused nothing)."""
    settings.WEATHER_MINUTES = 15
    fill(canary, "home", used=GiB, bytes_hard=GiB)
    home = dev_profile.targets.get(key="home")

    (full,) = canaries.step(dev_profile, every_kind_due, [home]).started

    assert full.problem.startswith("Not run: This run needs 64 MiB on $HOME, but only 0 B")
    assert full.settled and full.figure is None
    assert full.run.status == RunStatus.FAILED and full.run.slurm_job_id is None
    assert canaries.refused(dev_profile) is None
    assert not canaries.status(dev_profile).startswith("Stopped")


def test_canaries_hold_no_slot_of_the_weather_account(canary, dev_profile, settings) -> None:
    """Exemption `slots=False`: canaries are paced by the weather's own lock, one per
    target at a time; the weather account's runs going make none of them wait."""
    settings.MAX_ACTIVE_RUNS_PER_USER = 1
    make_run(canary, dev_profile.targets.get(key="home"), status=RunStatus.RUNNING)
    two = list(dev_profile.targets.filter(key__in=["global", "tmp"]))

    started = canaries.step(dev_profile, every_kind_due, two).started

    assert [r.run.status for r in started] == [RunStatus.QUEUED, RunStatus.QUEUED]


def test_the_schedule_starts_what_is_due_and_stops_once_slurm_refused(
    canary, dev_profile, settings, portal_up
) -> None:
    settings.WEATHER_MINUTES = 15
    first = canaries.start_due(dev_profile)
    assert len(first.started) == dev_profile.targets.count() == 7
    for started in first.started:
        BenchmarkRun.objects.filter(pk=started.run_id).update(
            status=RunStatus.FAILED, status_reason="Slurm refused the job: Invalid account"
        )
    readings.settle()

    assert canaries.start_due(dev_profile) is None
    assert canaries.status(dev_profile).startswith("Stopped: Slurm refused the canary on $")
    assert "(Slurm refused the job: Invalid account)" in canaries.status(dev_profile)
    settings.WEATHER_MINUTES = 0
    assert canaries.status(dev_profile).startswith("Off: WEATHER_MINUTES is 0")


def test_canaries_wait_while_a_calibration_round_measures_the_quiet_site(
    canary, dev_profile, settings, ada_account, portal_up
) -> None:
    settings.WEATHER_MINUTES = 15
    round_ = Calibration.objects.create(profile=dev_profile, repeat=1, exercise_keys=["1a"])
    calibrating = make_run(
        ada_account, dev_profile.targets.get(key="global"), calibration=round_,
        status=RunStatus.RUNNING,
    )  # fmt: skip

    assert canaries.start_due(dev_profile) is None
    assert not Reading.objects.exists()
    assert canaries.status(dev_profile).startswith("Waiting: a calibration round")

    BenchmarkRun.objects.filter(pk=calibrating.pk).update(status=RunStatus.COMPLETED)
    assert len(canaries.start_due(dev_profile).started) == 7


def test_no_canary_starts_while_the_portal_cannot_take_its_figure(
    canary, dev_profile, settings
) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        unused_tcp_port = probe.getsockname()[1]
    settings.WEATHER_MINUTES = 15
    settings.PORTAL_CALLBACK_URL = f"http://127.0.0.1:{unused_tcp_port}"

    assert canaries.start_due(dev_profile) is None
    assert not Reading.objects.exists()
    assert canaries.status(dev_profile).startswith(
        f"Waiting: the portal's address for jobs (http://127.0.0.1:{unused_tcp_port}) did not"
    )


def test_a_reading_is_taken_from_its_runs_result_and_marked_during_a_class(
    canary, dev_profile, ada_account
) -> None:
    (started,) = canaries.step(
        dev_profile, every_kind_due, list(dev_profile.targets.filter(key="global"))
    ).started
    now = timezone.now()
    run = started.run
    BenchmarkRun.objects.filter(pk=run.pk).update(
        status=RunStatus.RUNNING, started_at=now - timedelta(seconds=3)
    )
    assert readings.settle() == []  # still running
    make_run(
        ada_account, run.target, status=RunStatus.COMPLETED,
        started_at=now - timedelta(seconds=10), ended_at=now - timedelta(seconds=1),
    )  # fmt: skip
    BenchmarkRun.objects.filter(pk=run.pk).update(status=RunStatus.COMPLETED, ended_at=now)
    assert readings.settle() == []  # its output is on its way
    RunResult.objects.create(run=run, engine="fio", processes=1, write_bytes_per_s=95 * MiB)

    (taken,) = readings.settle()

    taken.refresh_from_db()
    assert taken.figure == 95.0 and taken.during_class
    assert taken.taken_at == now - timedelta(seconds=3)
    assert readings.settle() == []


def test_old_readings_go_with_their_runs_and_again_changes_nothing(
    canary, dev_profile, settings
) -> None:
    settings.WEATHER_RETENTION_DAYS = 30
    old = reading(canary, dev_profile, "global", 100.0, ago=timedelta(days=31))
    kept = reading(canary, dev_profile, "global", 100.0, ago=timedelta(days=29))

    assert readings.drop_old(timezone.now()) == 1
    assert readings.drop_old(timezone.now()) == 0
    assert not BenchmarkRun.objects.filter(pk=old.run_id).exists()
    assert list(Reading.objects.all()) == [kept]


def test_the_command_prints_the_stored_readings(canary, dev_profile) -> None:
    reading(canary, dev_profile, "global", 100.0, ago=timedelta(hours=1))
    latest = reading(canary, dev_profile, "global", 90.0, usual=180.0)
    reading(canary, dev_profile, "home", 900.0, usual=1000.0, kind=Kind.METADATA)
    out = io.StringIO()

    call_command("weather", "--json", stdout=out)

    stored = json.loads(out.getvalue())
    assert stored["kept"] == 3
    assert stored["targets"]["global"]["streaming"] | {"seconds": None} == {
        "exercise": None, "figure": 90.0, "usual": 180.0, "ratio": 0.5, "unit": "MiB/s",
        "taken_at": latest.taken_at.isoformat(), "during_class": False, "problem": "",
        "run": str(latest.run.key), "seconds": None,
    }  # fmt: skip
    assert stored["targets"]["home"]["metadata"]["ratio"] == 0.9
    text = io.StringIO()
    call_command("weather", stdout=text)
    assert (
        "$GLOBAL (global) streaming write: 90.0 MiB/s, usual 180.0, ratio 0.50" in text.getvalue()
    )


def test_a_round_without_an_account_is_refused_clearly(dev_profile, settings) -> None:
    settings.WEATHER_ACCOUNT = ""
    with pytest.raises(CommandError, match="WEATHER_ACCOUNT is not set"):
        call_command("weather", "--once", stdout=io.StringIO())
    with pytest.raises(CommandError, match="has no target nope"):
        call_command("weather", "--once", "--targets", "nope", stdout=io.StringIO())
