"""A figure no storage can deliver (a row stored before parsers refused one, or
edited by hand) is absent everywhere a person reads a run's figure: the runs table,
the run page, the overview and its grid, a trainee's page, the projector, the export,
the lesson, the advisor and calibration alike, while the true figures beside it stay."""

import pytest
from django.test import Client

from exercises.advisor.facts import figures as advisor_figures
from exercises.calibration.rounds import figures_of
from exercises.catalogue.models import Metric
from exercises.courses.models import Enrollment
from exercises.lab.reading import lesson
from jobs.models import BenchmarkRun
from tests.courses import add_run, make_course, make_instructor

pytestmark = pytest.mark.django_db

# 2 TiB/s from one process: twice what any storage can give one (jobs/figures.py).
IMPOSSIBLE_MIB_S = 2 * 2**20
WRITTEN = ("2,097,152", "2097152")


@pytest.fixture
def course_with_an_impossible_run(dev_profile, make_user):
    instructor = make_instructor(make_user)
    trainee, classmate = make_user("sl-trainee5"), make_user("sl-trainee6")
    course = make_course(dev_profile, instructor, "One figure")
    for who in (trainee, classmate):
        Enrollment.objects.create(course=course, user=who)
    add_run(trainee.cluster_account, course, "1a", "scratch", 321.4)
    impossible = add_run(trainee.cluster_account, course, "1a", "scratch", IMPOSSIBLE_MIB_S)
    add_run(classmate.cluster_account, course, "1a", "tmp", 4117.0)
    return course, instructor, trainee, impossible


def pages(course, impossible) -> dict[str, str]:
    return {
        "overview": f"/courses/{course.pk}/overview",
        "grid of 1a": f"/courses/{course.pk}/overview?exercise=1a",
        "trainee's page": f"/courses/{course.pk}/participants/{impossible.user_id}/",
        "projector": f"/courses/{course.pk}/discussion/1a",
        "csv": f"/courses/{course.pk}/export.csv",
        "json": f"/courses/{course.pk}/export.json",
    }


def test_an_impossible_figure_is_shown_nowhere(course_with_an_impossible_run) -> None:
    course, instructor, trainee, impossible = course_with_an_impossible_run
    client = Client()

    client.force_login(trainee)
    read = {
        "runs table": client.get("/lab/1a/").content.decode(),
        "run page": client.get(f"/jobs/runs/{impossible.key}/").content.decode(),
    }
    client.force_login(instructor)
    read |= {
        name: client.get(path).content.decode() for name, path in pages(course, impossible).items()
    }

    for name, text in read.items():
        assert not any(w in text for w in WRITTEN), name
    # The classmate's true figure stays, written as every page writes a figure.
    for name in ("overview", "grid of 1a", "projector"):
        assert "4,117.0" in read[name], name
    assert "4117.0" in read["csv"] and "4117.0" in read["json"]
    assert "321.4" in read["runs table"] and "321.4" in read["trainee's page"]
    # The run page says why its run has no figure.
    assert "figures no storage can deliver" in read["run page"]

    figures = [v.fast for v in lesson(course.exercises.get(key="1a"), trainee)]
    figures += [v.slow for v in lesson(course.exercises.get(key="1a"), trainee)]
    assert IMPOSSIBLE_MIB_S not in figures
    quoted = advisor_figures(course.profile, "1a", reading=False)
    assert all(value < IMPOSSIBLE_MIB_S for value, _ in quoted.values())
    run = BenchmarkRun.objects.select_related("result").get(pk=impossible.pk)
    assert figures_of(run) == {} and run.result.figure("write_bytes_per_s") is None
    assert Metric.WRITE not in figures_of(run)
