"""One source of figures for the advisor and every page: the site's quiet figures, its
calibration's medians first, then published; never a maximum, never the trainees'
runs, which share their targets with each other."""

import pytest
from django.utils import timezone

from exercises.advisor.facts import figures as job_figures
from exercises.advisor.facts import target_facts
from exercises.calibration.models import Calibration
from exercises.catalogue import site_figures
from exercises.catalogue.models import MeasuredReference, Metric
from jobs.models import BenchmarkRun, RunResult, RunStatus
from tests.runs import use_site_profile

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


def test_without_a_calibration_the_trainees_runs_are_never_quoted(dev_profile, make_user) -> None:
    """A class's runs share their targets: the issue saw $HOME's 6.6 MiB/s, one run in
    company, beside a calibration median of 20.0. Without a calibration or a published
    figure, the advisor has none, and says so."""
    for mib_s in (100.0, 120.0, 5000.0):
        a_lucky_run(dev_profile, make_user(), "1a", "global", mib_s)
    for mib_s in (6.6, 30.0):
        a_lucky_run(dev_profile, make_user(), "1a", "home", mib_s)

    assert site_figures.for_exercise(dev_profile, "1a", Metric.WRITE) == {}
    assert all(t.sequential_mib_s is None for t in target_facts(dev_profile))


def test_without_a_calibration_the_published_figures_stand_with_their_source(
    settings, make_user
) -> None:
    vsc3 = use_site_profile("vsc3", settings)
    a_lucky_run(vsc3, make_user(), "2a", "global", 900.0)

    facts = {t.key: t for t in target_facts(vsc3)}

    assert facts["global"].random_mib_s == 56.13  # the course's figure, not the run's 900
    assert facts["global"].random_source == (
        "exercise 2a, published: VSC-3 storage course (2019): IOR Max Write, random 4 KB "
        "writes, 1 process"
    )
    # Whether data survives a failure, read from the profile's words.
    assert facts["binfs"].redundant is False and facts["global"].redundant is True


def test_the_advisor_counts_files_at_the_calibrations_creates_per_second(dev_profile) -> None:
    mdtest = dev_profile.exercises.get(key="6")
    for target_key, creates in (("home", [1290.0, 1293.0, 1301.0]), ("tmp", [19e3, 2e4, 21e3])):
        MeasuredReference.objects.create(
            exercise=mdtest,
            target=dev_profile.targets.get(key=target_key),
            metric=Metric.CREATE,
            values=creates,
            median=creates[1],
            low=creates[0],
            high=creates[2],
        )

    home = {t.key: t for t in target_facts(dev_profile)}["home"]

    assert home.create_ops_s == 1293.0
    assert home.create_source.startswith("exercise 6, measured here on ")
    assert home.create_source.endswith("the median of 3 runs, 1,290.0–1,301.0 ops/s")
    assert home.purge == "" and home.redundant is False  # "none: one image file ..."


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
