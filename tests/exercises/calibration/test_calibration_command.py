"""`manage.py calibrate` as an administrator types it: a refused start says why in one
line, exits non-zero and starts nothing; a good one says which round it started."""

import pytest
from django.core.management import ManagementUtility, base

from exercises.calibration import rounds
from exercises.calibration.models import Calibration
from exercises.catalogue.models import MeasuredReference
from jobs.models import BenchmarkRun, RunResult, RunStatus

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def keep_the_test_connection(monkeypatch) -> None:
    # A command run from a shell closes the database connections at its end; here that
    # would close the test's transaction under it.
    monkeypatch.setattr(base.connections, "close_all", lambda: None)


def calibrate(capsys, *args: str) -> tuple[int, str, str]:
    """Runs the command as from a shell: (exit status, stdout, stderr)."""
    try:
        ManagementUtility(["manage.py", "calibrate", *args]).execute()
        status = 0
    except SystemExit as e:
        status = e.code
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def staff(make_user):
    return make_user("sl-calib", staff=True)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--user", "nobody-here"], "No portal user 'nobody-here'. Name an existing login"),
        ([], "Say whose cluster account runs the jobs: --user NAME"),
        (["--repeat", "0"], "--repeat takes a whole number from 1 to 20, not '0'."),
        (["--repeat", "21"], "--repeat takes a whole number from 1 to 20, not '21'."),
        (["--repeat", "five"], "--repeat takes a whole number from 1 to 20, not 'five'."),
        (["--profile", "atlantis"], "The site profile 'atlantis' is not loaded. An administrator"),
        (["--exercises", "1a,9z"], "has no exercise 9z; its exercises are 1a, 1b,"),
        (["--targets", "tape"], "has no target tape; its targets are home, global,"),
        (["--wait", "--timeout", "-1"], "--timeout takes a whole number from 1 to 86400"),
    ],
)
def test_a_refused_start_is_one_line_and_a_non_zero_exit(
    capsys, dev_profile, staff, args, message
) -> None:
    user = [] if "--user" in args or args == [] else ["--user", staff.username]

    status, out, err = calibrate(capsys, *user, *args)

    assert status == 1
    assert err.count("\n") == 1 and err.startswith("CommandError: ")
    assert message in err
    assert not Calibration.objects.exists() and not BenchmarkRun.objects.exists()


def test_a_user_without_cluster_account_is_told_what_to_do(capsys, dev_profile, make_user):
    status, _, err = calibrate(capsys, "--user", make_user(staff=True).username)

    assert status == 1 and err.count("\n") == 1
    assert "has no cluster account, and a calibration's jobs run as one. Link one" in err
    assert not Calibration.objects.exists()


def test_a_second_round_is_refused_while_one_goes(capsys, dev_profile, staff) -> None:
    assert calibrate(capsys, "--user", staff.username, "--repeat", "1")[0] == 0

    status, _, err = calibrate(capsys, "--user", staff.username)

    assert status == 1 and err.count("\n") == 1 and "is still going" in err
    assert Calibration.objects.count() == 1


def test_it_starts_a_round_and_says_how_to_follow_it(capsys, dev_profile, staff, settings):
    settings.CALIBRATION_PARALLEL = 2

    status, out, _ = calibrate(
        capsys, "--user", staff.username, "--repeat", "3", "--exercises", "1a,2a", "--targets",
        "tmp",
    )  # fmt: skip

    round_ = Calibration.objects.get()
    assert status == 0
    assert f"Calibration round {round_.pk} of Dev" in out
    assert "started: 6 runs as sl-calib, at most 2 at a time" in out
    assert "/lab/calibration/" in out
    assert round_.repeat == 3 and round_.started_by == staff
    assert round_.runs.count() == 2


def test_if_unmeasured_measures_only_what_has_no_figure_and_nothing_while_a_round_goes(
    capsys, dev_profile, staff
):
    args = ("--user", staff.username, "--repeat", "1", "--if-unmeasured", "--targets", "tmp")
    one, two = dev_profile.exercises.all()[:2]
    tmp = dev_profile.targets.get(key="tmp")
    MeasuredReference.objects.create(exercise=one, target=tmp, median=1, low=1, high=1)
    assert calibrate(capsys, *args)[0] == 0
    (round_,) = Calibration.objects.all()
    # The measured one is left out; every other exercise is measured.
    assert one.key not in round_.exercise_keys and two.key in round_.exercise_keys
    assert len(round_.exercise_keys) == dev_profile.exercises.count() - 1

    status, out, _ = calibrate(capsys, *args)
    assert status == 0 and "is going already; nothing started." in out

    Calibration.objects.update(finished_at="2026-01-01T00:00Z")
    for exercise in dev_profile.exercises.all():
        MeasuredReference.objects.get_or_create(
            exercise=exercise, target=tmp, defaults={"median": 1, "low": 1, "high": 1}
        )
    status, out, _ = calibrate(capsys, *args)
    assert status == 0
    assert "measured references of every exercise on every target already; nothing" in out
    assert Calibration.objects.count() == 1


def test_first_measures_the_first_exercises_then_a_round_of_all_follows_as_it_ends(
    capsys, dev_profile, staff, monkeypatch
):
    """make demo's rounds: 1a, 1b, 2a and 2b once on every target, so their pages have
    a figure within minutes; then every exercise three times, the first four again."""
    finish_every_run_at_once(monkeypatch)

    status, out, _ = calibrate(
        capsys, "--user", staff.username, "--repeat", "3", "--if-unmeasured", "--first",
        "1a,2a", "--first-repeat", "1", "--exercises", "1a,2a,3", "--targets", "tmp,home",
        "--wait",
    )  # fmt: skip

    assert status == 0, out
    first, then = Calibration.objects.order_by("pk")
    assert (first.exercise_keys, first.repeat) == (["1a", "2a"], 1)
    assert "Then a round of 3 exercises (1a, 2a, 3), ×3, starts as it ends." in out
    assert f"Round {then.pk} follows it: exercises 1a, 2a, 3." in first.summary
    assert (then.exercise_keys, then.repeat, then.target_keys) == (
        ["1a", "2a", "3"],
        3,
        ["tmp", "home"],
    )
    assert then.finished_at is None and then.runs.count() >= 1


def finish_every_run_at_once(monkeypatch) -> None:
    """The runs end as soon as they start, as if the cluster were very fast."""
    real_start_next = rounds._start_next

    def start_and_finish(*args, **kwargs):
        runs = real_start_next(*args, **kwargs)
        for i, run in enumerate(runs):
            BenchmarkRun.objects.filter(pk=run.pk).update(status=RunStatus.COMPLETED)
            RunResult.objects.create(
                run=run, engine="fio", processes=1, write_bytes_per_s=(100 + i) * 2**20
            )
        return runs

    monkeypatch.setattr(rounds, "_start_next", start_and_finish)


def test_wait_follows_the_round_and_prints_the_table(capsys, dev_profile, staff, monkeypatch):
    finish_every_run_at_once(monkeypatch)

    status, out, _ = calibrate(
        capsys, "--user", staff.username, "--repeat", "2", "--exercises", "1a", "--targets",
        "tmp", "--wait",
    )  # fmt: skip

    assert status == 0, out
    assert "2 of 2 runs gave figures" in out
    assert "exercise  target   measures         median     low–high  n  unit" in out
    assert "1a        $TMPDIR  write bandwidth   100.5  100.0–101.0  2  MiB/s" in out


def test_cancel_ends_the_round_going_and_keeps_none_of_it(capsys, dev_profile, staff) -> None:
    status, out, _ = calibrate(capsys, "--cancel", "--user", staff.username)
    assert status == 0 and "No calibration round of Dev" in out and "nothing to cancel" in out

    assert calibrate(capsys, "--user", staff.username, "--repeat", "1", "--targets", "tmp")[0] == 0
    round_ = Calibration.objects.get()

    status, out, _ = calibrate(capsys, "--cancel", "--user", staff.username)

    round_.refresh_from_db()
    assert status == 0 and f"Calibration round {round_.pk} cancelled" in out
    assert round_.finished_at is not None and f"Cancelled by {staff.username}" in round_.summary
    assert not round_.runs.exclude(status=RunStatus.CANCELLED).exists()
    assert not MeasuredReference.objects.exists()
