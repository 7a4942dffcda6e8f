"""How a class predicted an exercise, pair by pair, beside the class's medians."""

from exercises.predictions.classwide import summary

TARGETS = [("home", "$HOME"), ("global", "$GLOBAL"), ("tmp", "$TMPDIR")]


def test_each_pair_says_how_many_expected_which_and_what_the_class_measured() -> None:
    orders = [["home", "global", "tmp"], ["home", "tmp", "global"], ["tmp", "global", "home"]]
    medians = {"home": 20.0, "global": 200.0, "tmp": None}

    found = summary(orders, TARGETS, medians)

    assert found.count == 3
    assert found.fastest == [("$HOME", 2 / 3), ("$TMPDIR", 1 / 3)]
    first = found.pairs[0]  # most of the class wrong comes first
    assert (first.expected, first.other, first.share, first.right) == (
        "$HOME",
        "$GLOBAL",
        2 / 3,
        False,
    )
    assert first.ratio == 10.0
    # $TMPDIR not measured yet: how the class predicted it, and nothing more.
    assert [p.right for p in found.pairs[1:]] == [None, None]


def test_nobody_predicted_is_no_summary() -> None:
    assert summary([], TARGETS, {}) is None


def test_a_target_someone_left_out_counts_only_those_who_ranked_it() -> None:
    found = summary([["home", "global"], ["global", "home", "tmp"]], TARGETS, {})

    tmp_pairs = [p for p in found.pairs if "$TMPDIR" in (p.expected, p.other)]
    assert {p.voters for p in tmp_pairs} == {1}
