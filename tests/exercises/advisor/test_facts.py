"""The advisor's inputs from the database (exercises/advisor/facts.py): each exercise
a job may resemble carries the engine its runs use, as the lab runs it."""

from exercises.advisor.facts import shapes
from exercises.catalogue.models import SiteProfile


def test_each_shape_has_the_engine_its_exercise_runs_with(
    dev_profile: SiteProfile, django_assert_num_queries
) -> None:
    with django_assert_num_queries(1):  # the exercises, with their profile known
        engines = {shape.key: shape.engine for shape in shapes(dev_profile)}

    # The site's engine where an exercise names none, else its own.
    assert (engines["1a"], engines["1a-ior"], engines["6"]) == ("fio", "ior", "mdtest")
    # Every exercise but a sweep of request sizes (9), which is six workloads, no job's.
    assert engines == {e.key: e.runs_with for e in dev_profile.exercises.all() if e.key != "9"}
