"""No sentence of a profile states an outcome that no figure holds
(exercises/catalogue/outcomes.py): the loader refuses one, naming where and the words."""

import tomllib

import pytest

from exercises.catalogue import outcomes
from exercises.catalogue.models import Exercise, SiteProfile
from exercises.catalogue.profiles import PROFILES, held_sentences, load


def shipped(name: str) -> dict:
    return tomllib.loads((PROFILES / f"{name}.toml").read_text())


@pytest.mark.parametrize("name", ["dev", "vsc3", "cri", "tacc", "dkrz"])
def test_every_profile_in_the_repo_states_no_outcome_that_no_figure_holds(name: str) -> None:
    data = shipped(name)
    assert outcomes.unheld(data, held_sentences(data)) == []
    # It is the rule the loader applies: the profile would load (tested with the
    # database in test_site_profiles.py); here, that the rule reads its prose at all.
    assert sum(len(outcomes.sentences(e["how_to_read"])) for e in data["exercises"]) > 5


@pytest.mark.parametrize(
    "sentence",
    [
        "Why does collective I/O lose in $TMPDIR?",  # a question that takes it as given
        "In $TMPDIR there is no trip to save, so collective loses.",
        "Divide by your 10c figure on $WORK: close to 1.",
        "Small random writes crawl at a few MiB/s.",
        "How much faster was collective than independent on $WORK?",
        "A parallel filesystem gains the most from eight writers.",
        "Striping these files as well gains next to nothing.",
        "The disk, which is shared by everyone, loses.",  # a relative which opens nothing
        "4b should land near your 1a figure.",
    ],
)
def test_a_sentence_that_states_an_outcome_is_found(sentence: str) -> None:
    assert outcomes.outcome_words(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "Did collective I/O win or lose in $TMPDIR, and what does it cost there?",
        "Which targets got faster with eight processes, and what do they have in common?",
        "See which targets speed up when several processes write at once.",
        "Check whether more processes gain on small random writes.",
        "A crash of the VM can lose or damage what it holds.",  # data, not a figure
        "Divide by your 1a figure on the same target: the ratio is what eight writers add.",
        "The chart's scale is logarithmic.",
    ],
)
def test_an_open_question_and_a_plain_fact_state_none(sentence: str) -> None:
    assert outcomes.outcome_words(sentence) == []


def test_sentences_are_cut_at_their_ends_not_at_figures_or_abbreviations() -> None:
    text = "It took 1.6 MiB/s, e.g. on $GLOBAL. Then $TMPDIR took more. Why?"
    assert outcomes.sentences(text) == [
        "It took 1.6 MiB/s, e.g. on $GLOBAL.",
        "Then $TMPDIR took more.",
        "Why?",
    ]


def test_a_claims_and_a_findings_own_sentences_may_state_their_outcome() -> None:
    data = shipped("dev")
    eight_b = next(e for e in data["exercises"] if e["key"] == "8b")
    lost = next(f["lower"] for f in eight_b["findings"] if f["side"] == "tmp")
    assert outcomes.outcome_words(lost)  # "collective calls lost": an outcome
    eight_b["how_to_read"] += " " + lost
    assert outcomes.unheld(data, held_sentences(data)) == []
    # The same words with no finding to hold them: refused.
    eight_b["findings"] = []
    (stated,) = outcomes.unheld(data, held_sentences(data))
    assert stated.where == "exercise '8b', how_to_read"


@pytest.mark.django_db
def test_the_loader_refuses_an_outcome_no_figure_holds_naming_the_exercise_and_the_words() -> None:
    data = shipped("dev")
    data["profile"]["name"] = "outcomes-test"
    eight_b = next(e for e in data["exercises"] if e["key"] == "8b")
    eight_b["questions"].append("Why does collective I/O lose in $TMPDIR?")

    with pytest.raises(ValueError) as refused:
        load(data)

    said = str(refused.value)
    assert "exercise '8b', questions" in said
    assert "'lose'" in said and "Why does collective I/O lose in $TMPDIR?" in said
    assert not SiteProfile.objects.filter(name="outcomes-test").exists()


@pytest.mark.django_db
def test_the_admin_refuses_an_outcome_in_an_exercises_prose(dev_profile) -> None:
    from django.core.exceptions import ValidationError

    exercise: Exercise = dev_profile.exercises.get(key="1b")
    exercise.full_clean()  # as loaded: held
    exercise.how_to_read += " A parallel filesystem gains the most."
    with pytest.raises(ValidationError, match="states an outcome .*gains.* that no figure holds"):
        exercise.full_clean()
