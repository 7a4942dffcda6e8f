"""One source of figures for the advisor and every page: the site's calibration
medians first, then the class's, then published; never a maximum."""

import pytest
from django.utils import timezone

from exercises.advisor.facts import figures as job_figures
from exercises.advisor.facts import target_facts
from exercises.calibration.models import Calibration
from exercises.catalogue import site_figures
from exercises.catalogue.models import MeasuredReference, Metric
from jobs.models import BenchmarkRun, RunResult, RunStatus

pytestmark = pytest.mark.django_db

# A calibration's runs per target: MiB/s of 1a (streaming) and 2a (random 4 KiB).
CALIBRATED = {
    "1a": {"home": [20.5, 20.4, 21.7], "global": [196.5, 200.0, 200.1], "tmp": [9074, 9970, 10581]},
    "2a": {"home": [2.9, 3.0, 3.1], "global": [1.6, 1.6, 1.7], "tmp": [3859, 4148, 4276]},
}


@pytest.fixture
def calibrated(dev_profile):
    for key, per_target in CALIBRATED.items():
        exercise = dev_profile.exercises.get(key=key)
        for target_key, values in per_target.items():
            MeasuredReference.objects.create(
                exercise=exercise,
                target=dev_profile.targets.get(key=target_key),
                metric=Metric.WRITE,
                values=values,
                median=sorted(values)[1],
                low=min(values),
                high=max(values),
            )
    return dev_profile


def a_lucky_run(profile, user, exercise_key: str, target_key: str, mib_s: float) -> None:
    exercise = profile.exercises.get(key=exercise_key)
    run = BenchmarkRun.objects.create(
        user=user,
        cluster_username="sl-x",
        target=profile.targets.get(key=target_key),
        exercise=exercise,
        target_directory="/x",
        workload=exercise.workload.model_dump(mode="json"),
        time_limit_minutes=2,
        result_token_hash="x",
        status=RunStatus.COMPLETED,
    )
    RunResult.objects.create(run=run, engine="fio", processes=1, write_bytes_per_s=mib_s * 2**20)


def test_the_advisor_quotes_the_calibrations_stored_medians_not_the_best_run(
    calibrated, make_user
) -> None:
    # A trainee's run far above anything the calibration saw changes nothing.
    a_lucky_run(calibrated, make_user(), "2a", "global", 900.0)
    facts = {t.key: t for t in target_facts(calibrated)}

    for target_key in ("home", "global", "tmp"):
        stored = MeasuredReference.objects.get(
            exercise__key="1a", target__key=target_key, metric=Metric.WRITE
        )
        assert facts[target_key].sequential_mib_s == stored.median
    assert facts["global"].random_mib_s == 1.6  # not 900, not 1.7
    assert facts["scratch"].sequential_mib_s is None  # never calibrated: no figure
    # Check my job quotes the same figures, with how many runs and their spread.
    median, source = job_figures(calibrated, "2a", reading=False)["tmp"]
    assert median == 4148
    assert source.endswith("the median of 3 runs, 3,859.0–4,276.0 MiB/s")


def test_without_a_calibration_the_trainees_median_stands_never_the_maximum(
    dev_profile, make_user
) -> None:
    for mib_s in (100.0, 120.0, 5000.0):
        a_lucky_run(dev_profile, make_user(), "1a", "global", mib_s)
    for mib_s in (10.0, 30.0):
        a_lucky_run(dev_profile, make_user(), "1a", "home", mib_s)

    found = site_figures.for_exercise(dev_profile, "1a", Metric.WRITE)

    assert found["global"].value == 120.0 and found["home"].value == 20.0
    assert found["global"].source == "the median of 3 trainees' medians in this lab"
    assert target_facts(dev_profile)[1].sequential_mib_s == 120.0


def test_one_trainees_repeats_count_once_in_the_labs_figure(dev_profile, make_user) -> None:
    """Five double clicks of one trainee at 900 MiB/s against two others at 100 and
    120: by runs the median would be 900; by trainees it is 120."""
    eager = make_user()
    for _ in range(5):
        a_lucky_run(dev_profile, eager, "1a", "global", 900.0)
    for mib_s in (100.0, 120.0):
        a_lucky_run(dev_profile, make_user(), "1a", "global", mib_s)
    a_lucky_run(dev_profile, make_user(), "1a", "home", 20.0)

    found = site_figures.for_exercise(dev_profile, "1a", Metric.WRITE)

    assert found["global"].value == 120.0
    assert found["home"].source == "the median of one trainee's runs in this lab"


def test_a_read_figure_no_run_can_give_counts_in_no_class_median(dev_profile, make_user) -> None:
    """A read figure stored by hand, or before parsers refused one (NaN, an infinity,
    beyond 1 TiB/s per process), is left out as a write figure would be."""
    reads = {"scratch": (300.0, 500.0, float("inf"), float("nan"), 2.0**21), "global": (50.0,)}
    for target_key, figures in reads.items():
        for read_mib_s in figures:
            user = make_user()
            a_lucky_run(dev_profile, user, "1b", target_key, 100.0)
            RunResult.objects.filter(run__user=user, read_bytes_per_s=None).update(
                read_bytes_per_s=read_mib_s * 2**20
            )

    found = site_figures.for_exercise(dev_profile, "1b", Metric.READ)

    assert found["scratch"].value == 400.0  # the median of 300 and 500
    assert found["scratch"].source == "the median of 2 trainees' medians in this lab"


def test_a_round_that_has_not_finished_is_never_quoted_and_a_finished_one_is_named(
    calibrated, make_user
) -> None:
    """The walk found the advisor quoting 972.8 for $SCRATCH 1a, the median of two of
    an unfinished round's three runs. Its runs are the site's, not a trainee's, and its
    figures become the site's only when the round has ended (calibration/rounds.py)."""
    staff = make_user()
    going = Calibration.objects.create(
        profile=calibrated, started_by=staff, repeat=3, exercise_keys=["1a"],
        target_keys=["scratch", "home"],
    )  # fmt: skip
    for target_key, mib_s in (("scratch", 972.8), ("scratch", 972.8), ("home", 19.0)):
        a_lucky_run(calibrated, staff, "1a", target_key, mib_s)
    BenchmarkRun.objects.filter(user=staff).update(calibration=going)
    done = Calibration.objects.create(
        profile=calibrated, repeat=3, exercise_keys=["1a"], finished_at=timezone.now()
    )
    MeasuredReference.objects.filter(target__key="home").update(calibration=done)

    found = site_figures.for_exercise(calibrated, "1a", Metric.WRITE)
    facts = {t.key: t for t in target_facts(calibrated)}

    assert "scratch" not in found and facts["scratch"].sequential_mib_s is None
    assert found["home"].value == 20.5  # the finished round's median, not the going one's 19
    assert found["home"].source.startswith(
        f"measured here by calibration round {done.pk} on {timezone.now():%-d %B %Y}: "
        "the median of 3 runs"
    )
