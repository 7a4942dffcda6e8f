"""What an exercise's figures say, in words chosen from them
(exercises/catalogue/findings.py): the trainee's latest figures pick the sentence, else
the site's quiet ones; where the two fall different ways, both are said."""

import pytest

from exercises.catalogue.findings import Finding, findings_of, parse, said, way
from exercises.catalogue.lessons import Side

TMP, TMP_8A = Side("8b", "tmp"), Side("8a", "tmp")
NAMES = {"tmp": "$TMPDIR", "global": "$GLOBAL"}
COLLECTIVE = Finding(
    TMP,
    TMP_8A,
    1.25,
    higher="In $TMPDIR collective calls won as well.",
    alike="In $TMPDIR the two ways wrote about alike.",
    lower="In $TMPDIR collective calls lost.",
)


def quiet_of(figures: dict) -> tuple:
    return figures.get, lambda side: "calibration round 3, 24 November 2026"


def test_the_trainees_figures_pick_the_sentence_and_are_shown_beside_it() -> None:
    """The issue's page: 8b went 360 -> 611 MiB/s in $TMPDIR. The page must not say
    that collective lost there."""
    mine = {TMP: 611.0, TMP_8A: 360.0}
    finding = said(COLLECTIVE, mine.get, *quiet_of({}), NAMES)

    assert finding.sentence == "In $TMPDIR collective calls won as well."
    assert finding.figures == (
        "Your latest runs: 8b on $TMPDIR 611.0 MiB/s, 8a on $TMPDIR 360.0 MiB/s (1.7×)."
    )
    assert finding.state == "mine"


def test_without_runs_of_mine_the_sites_quiet_figures_pick_it_and_say_whose_they_are() -> None:
    finding = said(COLLECTIVE, {}.get, *quiet_of({TMP: 500.0, TMP_8A: 720.0}), NAMES)

    assert finding.sentence == "In $TMPDIR collective calls lost."
    assert finding.figures.startswith(
        "The site's quiet figures (calibration round 3, 24 November 2026): "
        "8b on $TMPDIR 500.0 MiB/s, 8a on $TMPDIR 720.0 MiB/s (0.7×)"
    )
    assert finding.state == "quiet"


def test_where_mine_and_the_sites_fall_different_ways_both_are_said_each_with_its_figures() -> None:
    mine = {TMP: 611.0, TMP_8A: 360.0}
    finding = said(COLLECTIVE, mine.get, *quiet_of({TMP: 500.0, TMP_8A: 720.0}), NAMES)

    assert finding.parted
    assert finding.sentence == "In $TMPDIR collective calls won as well."
    assert "(1.7×)." in finding.figures
    assert finding.figures.endswith(
        "(0.7×), which say otherwise: In $TMPDIR collective calls lost."
    )


def test_with_no_figure_at_all_it_says_what_to_run_and_no_outcome() -> None:
    finding = said(COLLECTIVE, {}.get, *quiet_of({}), NAMES)

    assert finding.sentence == "Run 8b and 8a on $TMPDIR to see how they compare."
    assert finding.figures == "" and finding.state == "pending"


def test_a_way_the_profile_did_not_word_is_said_from_the_figures_alone() -> None:
    terse = Finding(TMP, TMP_8A, 1.25, lower="In $TMPDIR collective calls lost.")
    finding = said(terse, {TMP: 900.0, TMP_8A: 300.0}.get, *quiet_of({}), NAMES)

    assert finding.sentence == "8b on $TMPDIR wrote faster than 8a on $TMPDIR (3.0×)."


@pytest.mark.parametrize(
    ("ratio", "expected"), [(1.26, "higher"), (1.25, "alike"), (0.8, "alike"), (0.79, "lower")]
)
def test_about_the_same_is_within_the_findings_factor_either_way(ratio, expected) -> None:
    assert way(ratio, 1.25) == expected


def test_the_ratio_is_the_one_the_page_shows_so_a_reader_who_divides_gets_the_same() -> None:
    """125.04 against 100.0 prints 125.0 and 100.0: 1.25, about alike, not faster."""
    finding = said(COLLECTIVE, {TMP: 125.04, TMP_8A: 100.0}.get, *quiet_of({}), NAMES)
    assert finding.sentence == "In $TMPDIR the two ways wrote about alike."


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        ([{"side": "tmp", "higher": "x"}], "missing against"),
        ([{"side": "tmp", "against": "tmp", "higher": "x"}], "compared with itself"),
        ([{"side": "tmp", "against": "8a/tmp"}], "say at least one of"),
        ([{"side": "tmp", "against": "8a/tmp", "higher": "x", "within": 0.5}], "not 1 or more"),
        ([{"side": "tmp", "against": "8a/gpfs", "higher": "x"}], "no target 'gpfs'"),
        ([{"side": "tmp", "against": "8a/tmp", "faster": "x"}], "unknown field(s) faster"),
        ([{"side": "project:stored", "against": "8a/tmp", "higher": "x"}], "spaces only"),
    ],
)
def test_a_finding_with_a_mistake_is_refused_saying_what_to_fix(raw, error) -> None:
    with pytest.raises(ValueError, match=error.replace("(", r"\(").replace(")", r"\)")):
        parse(raw, "8b", {"8a", "8b"}, {"tmp", "global", "project"}, {})


def test_a_row_edited_past_the_checks_says_nothing_rather_than_break_the_page() -> None:
    edited = type("E", (), {"key": "8b", "findings": [{"side": 3}]})()
    assert findings_of(edited) == []
