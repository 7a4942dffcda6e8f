"""Where the site's calibration stands, as the pages that lack a quiet figure say it
(exercises/calibration/standing.py, through exercises/catalogue/measuring.py)."""

import pytest
from django.utils import timezone

from exercises.calibration.rounds import advance, start_round
from exercises.calibration.standing import standing
from exercises.catalogue import measuring
from jobs.models import ACTIVE_STATUSES, BenchmarkRun, RunStatus

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(make_user):
    return make_user("sl-calib", staff=True)


def end_going(round_) -> None:
    BenchmarkRun.objects.filter(calibration=round_, status__in=ACTIVE_STATUSES).update(
        status=RunStatus.FAILED, ended_at=timezone.now()
    )


def test_a_pair_being_measured_says_how_far_its_round_is(staff, dev_profile, settings) -> None:
    settings.CALIBRATION_PARALLEL = 1
    round_ = start_round(
        staff,
        dev_profile,
        repeat=1,
        exercise_keys=["1a", "1b"],
        target_keys=["tmp", "home"],
        then_exercise_keys=["9"],
    )
    for _ in range(3):  # three runs end: the round's own pace is believed
        end_going(round_)
        advance(round_.pk)

    now = standing(dev_profile.pk)

    # A cell says which round; the sentence above the table how far it is.
    assert now.of("1a", "tmp") == f"being measured (round {round_.pk})"
    assert now.of("9", "tmp") == f"next to be measured (after round {round_.pk})"
    assert now.of("2a", "tmp") == "not calibrated yet"
    said = now.sentence("1a")
    assert f"calibration round {round_.pk}, 3 of 4 runs, about " in said
    assert "They appear under Measured here when the round ends." in said
    assert now.sentence("2a") == ""


def test_a_pair_its_last_round_measured_no_figure_of_says_so(staff, dev_profile) -> None:
    round_ = start_round(staff, dev_profile, repeat=1, exercise_keys=["2a"], target_keys=["tmp"])
    end_going(round_)
    advance(round_.pk)

    assert standing(dev_profile.pk).of("2a", "tmp") == (
        f"round {round_.pk} measured no figure of it (its runs failed)"
    )


def test_pages_below_the_calibration_read_it_through_the_registered_reader(
    staff, dev_profile
) -> None:
    start_round(staff, dev_profile, repeat=1, exercise_keys=["2a"], target_keys=["tmp"])
    assert measuring.standing(dev_profile.pk).of("2a", "tmp").startswith("being measured")
