"""The count of sentences a page's own figures deny (tests/contradictions.py) finds
what it should: a lab page as the portal draws it has none; the same page with a
sentence its figures deny, or an outcome no figure holds, has them."""

import pytest

from exercises.catalogue.models import MeasuredReference, Metric
from jobs.models import RunResult
from tests.contradictions import contradictions, readings
from tests.runs import make_run

pytestmark = pytest.mark.django_db


def completed(account, profile, exercise: str, target: str, mib_s: float):
    run = make_run(
        account,
        profile.targets.get(key=target),
        exercise=profile.exercises.get(key=exercise),
        status="completed",
    )
    RunResult.objects.create(run=run, engine="ior", processes=8, write_bytes_per_s=mib_s * 2**20)
    return run


@pytest.fixture
def page_8b(client, dev_profile, make_user) -> str:
    """8b's page after 8a and 8b on $WORK and $TMPDIR: collective won on $WORK (its
    claim) and in $TMPDIR (a finding), with the site's quiet figures of $GLOBAL."""
    ada = make_user("sl-contra-ada")
    for exercise, target, mib_s in (
        ("8a", "work", 15.0), ("8b", "work", 30.9), ("8a", "tmp", 294.5), ("8b", "tmp", 611.0),
    ):  # fmt: skip
        completed(ada.cluster_account, dev_profile, exercise, target, mib_s)
    for exercise, median in (("8a", 40.0), ("8b", 35.0)):
        MeasuredReference.objects.create(
            exercise=dev_profile.exercises.get(key=exercise),
            target=dev_profile.targets.get(key="global"),
            metric=Metric.WRITE, median=median, low=median, high=median, values=[median],
        )  # fmt: skip
    client.force_login(ada)
    return client.get("/lab/8b/").content.decode()


def test_a_lab_page_as_drawn_says_nothing_its_figures_deny(page_8b: str) -> None:
    assert "collective calls won as well" in page_8b  # the finding, from 611 and 294.5
    assert contradictions(page_8b) == []


def test_a_finding_whose_sentence_its_figures_deny_is_counted(page_8b: str) -> None:
    lying = page_8b.replace('data-way="higher"', 'data-way="lower"', 1)
    (problem,) = contradictions(lying)
    assert "its sentence is the lower one" in problem


def test_a_claim_said_shown_against_its_figures_is_counted(page_8b: str) -> None:
    lying = page_8b.replace(
        "15.0 MiB/s (2.1×): they show it", "15.0 MiB/s (2.1×): they do not show it"
    )
    assert any("says 'they do not show it' at 2.1×" in p for p in contradictions(lying))


def test_a_ratio_printed_beside_other_figures_is_counted(page_8b: str) -> None:
    lying = page_8b.replace("(2.1×)", "(3.1×)", 1)
    assert any("3.1× printed beside" in p for p in contradictions(lying))


def test_an_outcome_in_the_prose_that_no_figure_holds_is_counted(page_8b: str) -> None:
    lying = page_8b.replace(
        "<h3>Discuss</h3>", "<p>In $TMPDIR collective I/O loses.</p><h3>Discuss</h3>"
    )
    (problem,) = contradictions(lying)
    assert problem == "states loses held by no figure: In $TMPDIR collective I/O loses."


def test_a_sweeps_sizes_and_a_runs_space_are_read_as_the_page_prints_them() -> None:
    """ "at 4 KiB" names a request size, "56.1 MiB stored" a space: each reading pairs
    figures of one kind."""
    sweep = "9 on $GLOBAL at 1 MiB 170.2 MiB/s, 9 on $GLOBAL at 4 KiB 1.6 MiB/s (106×): yes"
    assert readings(sweep) == [(170.2, 1.6, "106", ": yes")]
    space = "Your latest run of 11a on $PROJECT: 128 MiB written, 56.1 MiB stored (2.3×): ok"
    assert readings(space) == [(128.0, 56.1, "2.3", ": ok")]
