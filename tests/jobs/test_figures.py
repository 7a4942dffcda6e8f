"""A run's figure has one home (jobs/figures.py): the rule in Python and in SQL say
the same of every figure, and every page writes a figure one way."""

import math

import pytest

from jobs.figures import MAX_BYTES_PER_S_PER_PROCESS, MAX_OPS_PER_S_PER_PROCESS, figure, shown
from jobs.models import RunResult
from tests.courses import add_run, make_course

CEILING = {
    "write_bytes_per_s": MAX_BYTES_PER_S_PER_PROCESS,
    "create_ops_s": MAX_OPS_PER_S_PER_PROCESS,
}


def candidates(field: str) -> list[float]:
    top = CEILING[field]
    return [-1.0, 0.0, 1.0, 1e6, 2 * top, 2 * top + 1, 3 * top, math.inf, -math.inf, math.nan]


@pytest.mark.django_db
@pytest.mark.parametrize("field", CEILING)
def test_python_and_sql_keep_the_same_figures(field, dev_profile, make_user) -> None:
    """Two processes: up to twice the ceiling can be true, nothing above, nothing
    below or at 0, no NaN and no infinity."""
    instructor = make_user()
    course = make_course(dev_profile, instructor, "Figures")
    user = make_user("sl-trainee5")
    values = candidates(field)
    for value in values:
        run = add_run(user.cluster_account, course, "1a", "scratch", None)
        RunResult.objects.create(run=run, engine="fio", processes=2, **{field: value})

    in_sql = sorted(
        v
        for v in RunResult.objects.filter(run__user=user)
        .plausible(field)
        .values_list(field, flat=True)
    )
    in_python = sorted(
        r.figure(field)
        for r in RunResult.objects.filter(run__user=user)
        if r.figure(field) is not None
    )

    top = CEILING[field]
    assert in_sql == [1.0, 1e6, 2 * top]
    per = 2**20 if field == "write_bytes_per_s" else 1
    assert in_python == [v / per for v in in_sql]


def test_a_bandwidth_reads_in_mib_s_and_a_rate_as_it_is() -> None:
    assert figure("write_bytes_per_s", 9029.5 * 2**20, 1) == 9029.5
    assert figure("create_ops_s", 19795.0, 8) == 19795.0
    assert figure("read_bytes_per_s", None, 1) is None


@pytest.mark.parametrize(
    "value,text",
    [
        (9029.54, "9,029.5"),
        (0.84, "0.8"),
        (2232.44, "2,232.4"),
        (1e6, "1,000,000.0"),
        (None, "–"),
        (math.nan, "–"),
    ],
)
def test_every_figure_is_written_one_way(value, text) -> None:
    assert shown(value) == text
