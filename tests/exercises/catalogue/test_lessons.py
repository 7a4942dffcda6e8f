"""Whether runs show an exercise's lesson (exercises/catalogue/lessons.py), as the lab says it."""

import pytest
from django.core.exceptions import ValidationError

from exercises.catalogue.lessons import Claim, Side, claims_of, judge, line, parse
from exercises.predictions.classwide import summary
from jobs.stored import Space
from portal.units import MiB

TMP, GLOBAL = Side("2a", "tmp"), Side("2a", "global")
FIVE_TIMES = Claim(TMP, GLOBAL, 5.0, "Memory takes small random writes at least 5× as fast.")
NAMES = {"tmp": "$TMPDIR", "global": "$GLOBAL"}


def test_a_claim_holds_from_its_factor_on() -> None:
    (shown,) = judge([FIVE_TIMES], {TMP: 500.0, GLOBAL: 100.0}.get)
    (short,) = judge([FIVE_TIMES], {TMP: 499.0, GLOBAL: 100.0}.get)
    (pending,) = judge([FIVE_TIMES], {TMP: 500.0}.get)

    assert (shown.holds, short.holds, pending.holds) == (True, False, None)
    assert shown.ratio == 5.0 and pending.ratio is None


def test_the_lab_says_what_the_runs_show_with_both_figures() -> None:
    (shown,) = judge([FIVE_TIMES], {TMP: 4148.4, GLOBAL: 1.6}.get)
    (short,) = judge([FIVE_TIMES], {TMP: 6.0, GLOBAL: 1.6}.get)
    (pending,) = judge([FIVE_TIMES], {GLOBAL: 1.6}.get)

    assert line(shown, NAMES).detail == (
        "Your latest runs: 2a on $TMPDIR 4,148.4 MiB/s, 2a on $GLOBAL 1.6 MiB/s (2,593×): "
        "they show it."
    )
    assert line(short, NAMES).state == "not-shown"
    assert "(3.8×), and the lesson needs 5×: they do not show it." in line(short, NAMES).detail
    # Nothing the portal knows of stood in its way: it says so, and what to do.
    assert "no canary read its target slow then" in line(short, NAMES).detail
    assert line(short, NAMES).detail.endswith("Run both again.")
    assert line(pending, NAMES).detail == "Run 2a on $TMPDIR and 2a on $GLOBAL to see it."


@pytest.mark.django_db
def test_an_exercise_whose_claims_name_no_target_of_its_site_is_refused(dev_profile) -> None:
    exercise = dev_profile.exercises.get(key="1a")
    exercise.claims = [{"faster": "tmp", "slower": "gpfs", "text": "Memory wins."}]

    with pytest.raises(ValidationError, match="no target 'gpfs' in this profile"):
        exercise.full_clean()
    # A row edited past the admin into what is no claim states no lesson: the page
    # still draws.
    exercise.claims = [{"faster": "tmp", "slower": "global", "factor": "lots", "text": "x"}]
    assert claims_of(exercise) == []


def test_the_lab_and_the_projector_give_one_ratio_for_one_pair() -> None:
    """A trainee reads 199.1 and 20.4 MiB/s and works out 9.8×; the raw medians give
    9.74. The lab's lesson and the projector's line both say what the figures say."""
    global_, home = Side("1a", "global"), Side("1a", "home")
    medians = {"global": 199.14, "home": 20.44}
    claim = Claim(global_, home, 1.0, "$GLOBAL streams faster than $HOME.")
    (verdict,) = judge([claim], {global_: medians["global"], home: medians["home"]}.get)
    pair = summary([["global", "home"]], [("home", "$HOME"), ("global", "$GLOBAL")], medians)
    (pair,) = pair.pairs

    lab = line(verdict, {"global": "$GLOBAL", "home": "$HOME"}).detail
    assert "1a on $GLOBAL 199.1 MiB/s, 1a on $HOME 20.4 MiB/s (9.8×)" in lab
    assert pair.times == "9.8×"


def test_a_sweep_claims_one_size_against_another_and_about_the_same_within_a_factor() -> None:
    """Exercise 9's claims: a request size's figure of one run ("global@4KiB"), and a
    claim that two figures are about the same (the sweep flattens)."""
    raw = [
        {"faster": "global@1MiB", "slower": "global@4KiB", "factor": 20, "text": "Grows."},
        {"faster": "global@4MiB", "slower": "global@1MiB", "within": 1.3, "text": "Flat."},
    ]
    grows, flat = claims_of(type("E", (), {"claims": raw, "key": "9"})())
    small, mib, four = (Side("9", "global", size) for size in (4096, 2**20, 4 * 2**20))
    assert (grows.faster, grows.slower, flat.within) == (mib, small, 1.3)
    assert str(small) == "9/global@4KiB" and small.run == Side("9", "global")

    figures = {small: 1.6, mib: 196.0, four: 199.0}
    shown, level = judge([grows, flat], figures.get)
    assert shown.holds and level.holds
    assert line(level, {"global": "$GLOBAL"}).detail == (
        "Your latest runs: 9 on $GLOBAL at 4 MiB 199.0 MiB/s, 9 on $GLOBAL at 1 MiB "
        "196.0 MiB/s (1.0×): they show it."
    )
    # Far apart either way is not "about the same".
    (slower,) = judge([flat], {four: 120.0, mib: 196.0}.get)
    (faster,) = judge([flat], {four: 300.0, mib: 196.0}.get)
    assert slower.holds is False and faster.holds is False
    assert "the lesson needs them within 1.3× of each other" in line(faster, NAMES).detail


def test_a_compression_claim_compares_what_a_run_wrote_with_what_was_stored() -> None:
    """Exercise 11a's and 11b's claims: a run's space on a target that compresses,
    written against stored, said as the trainee's one run."""
    raw = [
        {"faster": "project:written", "slower": "project:stored", "factor": 1.8, "text": "Less."},
        {"faster": "project:written", "slower": "project:stored", "within": 1.05, "text": "All."},
    ]
    packs, keeps = claims_of(type("E", (), {"claims": raw, "key": "11a"})())
    written, stored = (Side("11a", "project", space=space) for space in ("written", "stored"))
    assert (packs.faster, packs.slower) == (written, stored)
    assert str(stored) == "11a/project:stored" and stored.run == Side("11a", "project")

    space = Space(held=128 * MiB, stored=55 * MiB)
    figures = {side: side.figure(150.0, {}, space) for side in (written, stored)}
    assert figures == {written: 128.0, stored: 55.0}
    shown, not_all = judge([packs, keeps], figures.get)
    assert shown.holds and not_all.holds is False
    assert line(shown, {"project": "$PROJECT"}).detail == (
        "Your latest run of 11a on $PROJECT: 128 MiB written, 55 MiB stored (2.3×): they show it."
    )
    # Not shown: no neighbour is to blame for a run's space.
    assert "depends on their data and on how the target compresses it" in (
        line(not_all, {"project": "$PROJECT"}).detail
    )
    # Not measured (a target that does not compress): the lesson waits for one run.
    (pending,) = judge([packs], {written: None}.get)
    assert line(pending, {"project": "$PROJECT"}).detail == "Run 11a on $PROJECT to see it."


@pytest.mark.parametrize(
    ("faster", "slower", "said"),
    [
        ("project:written", "project", "compared with spaces only"),
        ("project:held", "project:stored", "'held' is not a space of a run"),
        ("global@4KiB:stored", "project:stored", "a sweep's size has a speed, not a space"),
    ],
)
def test_a_space_claim_that_cannot_be_measured_is_refused(faster, slower, said) -> None:
    raw = [{"faster": faster, "slower": slower, "text": "?"}]
    with pytest.raises(ValueError, match=said):
        parse(raw, "11a")


def test_a_lesson_of_one_run_asks_for_that_run_once() -> None:
    """Two sizes of one sweep, or a run's space: one run shows it."""
    grows = Claim(Side("9", "global", 2**20), Side("9", "global", 4096), 20.0, "Grows.")
    (pending,) = judge([grows], {}.get)
    assert line(pending, {"global": "$GLOBAL"}).detail == "Run 9 on $GLOBAL to see it."
