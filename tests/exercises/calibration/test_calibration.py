"""Calibration rounds without the cluster: runs are ended by hand, as the sync and the
result intake would end them. What is checked is what a site would notice: the
figures kept (median, lowest, highest), failed runs counted and left out, a later
round replacing an earlier one, one round at a time, and never more runs going at
once than CALIBRATION_PARALLEL."""

import random

import pytest
from django.utils import timezone

from exercises.calibration import rounds
from exercises.calibration.models import Calibration
from exercises.calibration.rounds import CalibrationRefused, advance, cancel_round, start_round
from exercises.catalogue.models import MeasuredReference, Metric
from jobs.models import ACTIVE_STATUSES, BenchmarkRun, RunResult, RunStatus
from portal.units import GiB, MiB
from tests.quotas import fill

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(make_user):
    return make_user("sl-calib", staff=True)


@pytest.fixture(autouse=True)
def two_at_a_time(settings) -> None:
    settings.CALIBRATION_PARALLEL = 2


def going(round_: Calibration) -> list[BenchmarkRun]:
    return list(round_.runs.filter(status__in=ACTIVE_STATUSES).order_by("pk"))


def complete(run: BenchmarkRun, mib_s: float | None = None, **fields: float) -> None:
    """The run as the sync and the intake leave it: completed, its figures in."""
    BenchmarkRun.objects.filter(pk=run.pk).update(
        status=RunStatus.COMPLETED, ended_at=timezone.now(), result_received_at=timezone.now()
    )
    write = mib_s * MiB if mib_s is not None else None
    RunResult.objects.create(
        run=run, engine=run.engine, processes=1, write_bytes_per_s=write, **fields
    )


def fail(run: BenchmarkRun, status: str = RunStatus.FAILED) -> None:
    BenchmarkRun.objects.filter(pk=run.pk).update(status=status, ended_at=timezone.now())


def run_round(round_: Calibration, figure) -> Calibration:
    """Ends the round's runs as they come, each with figure(run) (None: it fails)."""
    for _ in range(200):
        round_ = advance(round_.pk)
        if round_.finished_at:
            return round_
        for run in going(round_):
            value = figure(run)
            complete(run, value) if value is not None else fail(run)
    raise AssertionError("the round never ended")


def test_a_round_keeps_the_median_lowest_and_highest_of_each_pair(staff, dev_profile) -> None:
    round_ = start_round(staff, dev_profile, repeat=3, exercise_keys=["1a"], target_keys=["global"])
    figures = iter([300.0, 100.0, 200.0])

    round_ = run_round(round_, lambda run: next(figures))

    ref = MeasuredReference.objects.get(exercise__key="1a", target__key="global")
    assert (ref.median, ref.low, ref.high) == (200.0, 100.0, 300.0)
    assert ref.values == [300.0, 100.0, 200.0] and ref.metric == Metric.WRITE
    assert ref.calibration == round_
    assert "3 of 3 runs gave figures, 0 failed" in round_.summary


def test_runs_go_round_by_round_as_the_account_of_who_started(staff, dev_profile) -> None:
    round_ = start_round(
        staff, dev_profile, repeat=2, exercise_keys=["1a", "2a"], target_keys=["home", "tmp"]
    )

    first = going(round_)

    assert [(r.exercise.key, r.target.key) for r in first] == [("1a", "home"), ("1a", "tmp")]
    assert {r.cluster_username for r in first} == {"sl-calib"}
    assert all(r.course is None and r.calibration == round_ for r in first)
    assert first[0].workload == first[0].exercise.workload.model_dump(mode="json")
    # Every pair runs once before any pair runs a second time.
    for run in first:
        complete(run, 50.0)
    advance(round_.pk)
    assert [(r.exercise.key, r.target.key) for r in going(round_)] == [
        ("2a", "home"),
        ("2a", "tmp"),
    ]


@pytest.mark.parametrize("parallel", [1, 2, 3])
def test_never_more_runs_going_than_calibration_parallel(
    staff, dev_profile, settings, parallel
) -> None:
    settings.CALIBRATION_PARALLEL = parallel
    round_ = start_round(
        staff, dev_profile, repeat=3, exercise_keys=["1a", "1b"], target_keys=["home", "tmp"]
    )
    shuffle = random.Random(parallel)  # noqa: S311 -- an order of ends, not a secret
    most = 0
    for _ in range(200):
        round_ = advance(round_.pk)
        advance(round_.pk)  # a second tick at once (beat and --wait) starts nothing more
        if round_.finished_at:
            break
        now = going(round_)
        most = max(most, len(now))
        assert len(now) <= parallel
        # Runs end in any order, some at a time.
        for run in shuffle.sample(now, k=shuffle.randint(1, len(now))):
            complete(run, 10.0)
    assert round_.finished_at and most == parallel
    assert round_.runs.count() == 2 * 2 * 3


def test_failed_runs_are_counted_and_left_out_of_the_figures(staff, dev_profile) -> None:
    round_ = start_round(staff, dev_profile, repeat=3, exercise_keys=["1a"], target_keys=["tmp"])
    figures = iter([400.0, None, 600.0])

    round_ = run_round(round_, lambda run: next(figures))

    ref = MeasuredReference.objects.get(exercise__key="1a", target__key="tmp")
    assert ref.values == [400.0, 600.0] and ref.median == 500.0
    assert "2 of 3 runs gave figures, 1 failed or gave none" in round_.summary
    assert "1a on $TMPDIR: 1 of 3 runs gave no figure (1 failed)" in round_.summary


def test_a_completed_run_without_a_figure_counts_as_none(staff, dev_profile) -> None:
    round_ = start_round(staff, dev_profile, repeat=2, exercise_keys=["1a"], target_keys=["tmp"])
    first, second = going(round_)
    complete(first, 0.0)  # a figure that cannot be true
    BenchmarkRun.objects.filter(pk=second.pk).update(
        status=RunStatus.COMPLETED, parse_error="output ends early"
    )

    round_ = advance(round_.pk)

    assert round_.finished_at is not None
    assert not MeasuredReference.objects.exists()
    assert "1 no figure, 1 output not readable" in round_.summary
    assert "it has no measured reference yet" in round_.summary


def test_a_completed_run_whose_output_is_on_its_way_holds_the_round(staff, dev_profile) -> None:
    round_ = start_round(staff, dev_profile, repeat=1, exercise_keys=["1a"], target_keys=["tmp"])
    (run,) = going(round_)
    BenchmarkRun.objects.filter(pk=run.pk).update(
        status=RunStatus.COMPLETED, ended_at=timezone.now()
    )

    assert advance(round_.pk).finished_at is None

    complete_result = RunResult(run=run, engine="fio", processes=1, write_bytes_per_s=5 * MiB)
    complete_result.save()
    assert advance(round_.pk).finished_at is not None


def test_a_later_round_replaces_the_figures_of_an_earlier_one(staff, dev_profile) -> None:
    keys = {"exercise_keys": ["1a"], "target_keys": ["home", "tmp"]}
    first = run_round(start_round(staff, dev_profile, repeat=1, **keys), lambda run: 19.0)

    second = run_round(
        start_round(staff, dev_profile, repeat=2, **keys),
        lambda run: None if run.target.key == "home" else 900.0,
    )

    tmp = MeasuredReference.objects.get(target__key="tmp")
    assert (tmp.median, tmp.values, tmp.calibration) == (900.0, [900.0, 900.0], second)
    # Every run on $HOME failed this time: it keeps the first round's figure, and says so.
    home = MeasuredReference.objects.get(target__key="home")
    assert (home.median, home.calibration) == (19.0, first)
    assert "1a on $HOME: no run gave a figure (2 failed); it keeps its earlier" in second.summary
    assert MeasuredReference.objects.count() == 2


def test_only_one_round_per_profile_at_a_time(staff, dev_profile, make_user) -> None:
    going_round = start_round(staff, dev_profile, repeat=1, exercise_keys=["1a"])
    other = make_user("sl-calib2", staff=True)

    with pytest.raises(CalibrationRefused, match=f"round {going_round.pk} .* is still going"):
        start_round(other, dev_profile, repeat=3)

    assert Calibration.objects.count() == 1
    cancel_round(going_round.pk, staff)
    assert start_round(other, dev_profile, repeat=1, exercise_keys=["1a"])


def test_a_cancelled_round_cancels_its_runs_and_keeps_no_figure(staff, dev_profile) -> None:
    round_ = start_round(staff, dev_profile, repeat=3, exercise_keys=["1a"], target_keys=["home"])
    first, second = going(round_)
    complete(first, 100.0)

    assert cancel_round(round_.pk, staff) == 0

    round_.refresh_from_db()
    assert round_.finished_at is not None and "Cancelled by" in round_.summary
    assert BenchmarkRun.objects.get(pk=second.pk).status == RunStatus.CANCELLED
    advance(round_.pk)
    assert round_.runs.count() == 2  # nothing more started
    assert not MeasuredReference.objects.exists()
    with pytest.raises(CalibrationRefused, match="ended already"):
        cancel_round(round_.pk, staff)


def test_mdtest_keeps_its_four_rates(staff, dev_profile) -> None:
    round_ = start_round(staff, dev_profile, repeat=1, exercise_keys=["6"], target_keys=["tmp"])
    (run,) = going(round_)
    rates = {"create_ops_s": 1000.0, "stat_ops_s": 5000.0, "read_ops_s": 3000.0}
    complete(run, None, remove_ops_s=float("nan"), **rates)

    advance(round_.pk)

    kept = dict(MeasuredReference.objects.values_list("metric", "median"))
    assert kept == {Metric.CREATE: 1000.0, Metric.STAT: 5000.0, Metric.FILE_READ: 3000.0}


def test_what_cannot_start_starts_nothing(staff, dev_profile, make_user) -> None:
    for kwargs, message in (
        ({"repeat": 0}, "1 to 20 times, not 0"),
        ({"repeat": 21}, "1 to 20 times, not 21"),
        ({"repeat": 1, "exercise_keys": ["1a", "9z"]}, "has no exercise 9z; its exercises are"),
        ({"repeat": 1, "target_keys": ["nfs"]}, "has no target nfs; its targets are home,"),
    ):
        with pytest.raises(CalibrationRefused, match=message):
            start_round(staff, dev_profile, **kwargs)
    with pytest.raises(CalibrationRefused, match="has no cluster account"):
        start_round(make_user(staff=True), dev_profile, repeat=1)
    assert not Calibration.objects.exists() and not BenchmarkRun.objects.exists()


def test_a_round_whose_account_went_away_stops(staff, dev_profile) -> None:
    round_ = start_round(staff, dev_profile, repeat=3, exercise_keys=["1a"], target_keys=["tmp"])
    for run in going(round_):
        complete(run, 1.0)
    staff.cluster_account.delete()  # before its third run could start

    round_ = advance(round_.pk)

    assert round_.finished_at is not None
    assert "Stopped:" in round_.summary and "has no cluster account" in round_.summary
    assert round_.runs.count() == 2 and not MeasuredReference.objects.exists()


def test_progress_counts_the_rounds_runs(staff, dev_profile) -> None:
    round_ = start_round(staff, dev_profile, repeat=3, exercise_keys=["1a"])
    first, _ = going(round_)
    complete(first, 1.0)

    now = rounds.progress(round_)

    assert (now.total, now.started, now.going, now.ended, now.gave_figures) == (21, 2, 1, 1, 1)


def test_a_round_follows_the_plan_on_its_row_whatever_its_summary_says(staff, dev_profile) -> None:
    round_ = start_round(staff, dev_profile, repeat=1, exercise_keys=["2a"], target_keys=["tmp"])
    assert (round_.exercise_keys, round_.target_keys) == (["2a"], ["tmp"])
    Calibration.objects.filter(pk=round_.pk).update(summary="edited by hand in the admin")

    round_ = run_round(round_, lambda run: 80.0)

    ref = MeasuredReference.objects.get()
    assert (ref.exercise.key, ref.target.key, ref.median) == ("2a", "tmp", 80.0)


def test_a_round_respects_the_quota_as_the_lab_does(staff, dev_profile) -> None:
    """A calibration's runs are its starter's: on a target where their quota has no room
    left, a run is not sent to Slurm, and the round's summary says so."""
    fill(staff.cluster_account, "home", used=GiB, bytes_hard=GiB)
    round_ = start_round(
        staff, dev_profile, repeat=1, exercise_keys=["1a"], target_keys=["home", "tmp"]
    )

    round_ = run_round(round_, lambda run: 900.0)

    home = round_.runs.get(target__key="home")
    assert home.status == RunStatus.FAILED and home.slurm_job_id is None
    assert home.status_reason.startswith("Not run: This run needs")
    assert "1a on $HOME: no run gave a figure (1 not run (quota))" in round_.summary
    assert not MeasuredReference.objects.filter(target__key="home").exists()
    assert MeasuredReference.objects.get(target__key="tmp").median == 900.0


def test_figures_no_target_can_give_are_kept_out_and_shown(staff, dev_profile) -> None:
    """A forged or garbled figure must not become the site's reference: above twice the
    target's declared peak ($HOME: 20 MiB/s), or ten times away from its other runs."""
    keys = {"exercise_keys": ["1a"], "target_keys": ["home", "global"]}
    figures = {"home": iter([19.0, 51_200.0, 18.0]), "global": iter([400.0, 9.0, 380.0])}

    round_ = run_round(
        start_round(staff, dev_profile, repeat=3, **keys),
        lambda run: next(figures[run.target.key]),
    )

    home = MeasuredReference.objects.get(target__key="home")
    assert (home.values, home.kept_out, home.high) == ([19.0, 18.0], [51_200.0], 19.0)
    glob = MeasuredReference.objects.get(target__key="global")
    assert (glob.values, glob.kept_out, glob.median) == ([400.0, 380.0], [9.0], 390.0)
    assert (
        "1a on $HOME: kept out as implausible: write bandwidth 51,200.0 MiB/s "
        "(above 2× its peak of 20.0 MiB/s)"
    ) in round_.summary
    assert "1a on $GLOBAL: kept out as implausible: write bandwidth 9.0 MiB/s" in round_.summary


def test_a_sweep_keeps_its_median_at_each_size_and_a_space_its_medians(staff, dev_profile) -> None:
    """A lesson of exercise 9 names a request size ("global@4KiB"), one of 11a a space
    ("project:stored"): the site's quiet figures have them, so "Measured here" and the
    lesson's quiet pair are never missing for them."""
    round_ = start_round(
        staff, dev_profile, repeat=3, exercise_keys=["9", "11a"], target_keys=["project"]
    )
    sweeps = iter([(1.5, 190.0), (1.6, 200.0), (1.7, 195.0)])
    spaces = iter([(128, 56), (128, 57), (128, 55)])
    for _ in range(50):
        round_ = advance(round_.pk)
        if round_.finished_at:
            break
        for run in going(round_):
            if run.exercise.key == "9":
                small, large = next(sweeps)
                complete(run, large, series=[[4096, small * MiB], [4194304, large * MiB]])
            else:
                held, stored = next(spaces)
                complete(run, 100.0, held_bytes=held * MiB, stored_bytes=stored * MiB)

    sweep = MeasuredReference.objects.get(exercise__key="9", metric=Metric.WRITE)
    assert sweep.sizes == {4096: 1.6, 4194304: 195.0}
    space = MeasuredReference.objects.get(exercise__key="11a", metric=Metric.WRITE)
    assert space.space == {"held": 128 * MiB, "stored": 56 * MiB}
    assert space.by_size == {}


def test_a_round_that_names_what_follows_starts_it_as_it_ends(staff, dev_profile) -> None:
    round_ = start_round(
        staff,
        dev_profile,
        repeat=1,
        exercise_keys=["1a"],
        target_keys=["tmp"],
        then_exercise_keys=["1a", "2a"],
        then_repeat=2,
    )
    round_ = run_round(round_, lambda run: 10.0)

    then = rounds.current_round(dev_profile)
    assert then is not None and then.pk != round_.pk
    assert (then.exercise_keys, then.repeat, then.target_keys) == (["1a", "2a"], 2, ["tmp"])
    assert f"Round {then.pk} follows it" in round_.summary
    # The first round's figure stands meanwhile; the next replaces it when it ends.
    assert MeasuredReference.objects.get(exercise__key="1a").calibration == round_


def test_a_cancelled_round_starts_nothing_after_it(staff, dev_profile) -> None:
    round_ = start_round(
        staff, dev_profile, repeat=1, exercise_keys=["1a"], then_exercise_keys=["2a"]
    )
    cancel_round(round_.pk, staff)
    assert rounds.current_round(dev_profile) is None
