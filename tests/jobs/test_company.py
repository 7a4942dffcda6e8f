"""What a run shared (jobs/company.py): the other runs on its target whose time in Slurm
overlapped its own, on its node for a target each node has its own of. The runs' times
and nodes are set in the database, as the sync records them."""

from datetime import timedelta

import pytest
from django.utils import timezone

from jobs.company import Company, annotated, companions, company, most_at_once, run_node_local
from jobs.models import BenchmarkRun, RunStatus
from tests.runs import make_run

pytestmark = pytest.mark.django_db

T0 = timezone.now() - timedelta(hours=1)


def ran(account, target, start: int, end: int | None, nodes: str = "c1", **fields) -> BenchmarkRun:
    """A run that went from `start` to `end` seconds after T0 (None: still running)."""
    return make_run(
        account,
        target,
        status=RunStatus.COMPLETED if end is not None else RunStatus.RUNNING,
        started_at=T0 + timedelta(seconds=start),
        ended_at=T0 + timedelta(seconds=end) if end is not None else None,
        node_names=nodes,
        **fields,
    )


def company_of(run: BenchmarkRun) -> Company | None:
    return company(annotated(BenchmarkRun.objects.filter(pk=run.pk)).get())


@pytest.fixture
def ada(make_user):
    return make_user("sl-company-ada").cluster_account


@pytest.fixture
def bob(make_user):
    return make_user("sl-company-bob").cluster_account


def test_the_runs_that_overlapped_on_its_target_are_counted_by_whose(
    ada, bob, disk_target, tmpfs_target
) -> None:
    mine = ran(ada, disk_target, 0, 10)
    ran(ada, disk_target, 5, 15, nodes="c2")  # mine, on another node of a shared target
    ran(bob, disk_target, 2, 4)
    ran(bob, disk_target, 9, 30)
    ran(bob, disk_target, 10, 20)  # starts as mine ends: one after the other
    ran(bob, disk_target, -20, 0)  # ends as mine starts
    ran(bob, tmpfs_target, 0, 10)  # another target
    make_run(bob, disk_target, status=RunStatus.PENDING)  # never started

    assert company_of(mine) == Company(mine=1, others=2)
    assert [run.user_id for run in companions(mine)] == [bob.user_id, ada.user_id, bob.user_id]


def test_a_run_still_going_overlaps_until_now(ada, bob, disk_target) -> None:
    going = ran(ada, disk_target, 0, None)
    ran(bob, disk_target, 3000, 3001)  # long after it started, while it still runs

    assert company_of(going) == Company(others=1)


def test_on_a_nodes_own_directory_only_runs_on_its_node_are_counted(ada, bob, tmpfs_target) -> None:
    mine = ran(ada, tmpfs_target, 0, 10, nodes="c1")
    ran(bob, tmpfs_target, 1, 9, nodes="c2")
    ran(bob, tmpfs_target, 2, 8, nodes="c[1-2]")
    ran(bob, tmpfs_target, 3, 7, nodes="c1")
    ran(bob, tmpfs_target, 3, 7, nodes="")  # ran before nodes were recorded: not known

    assert company_of(mine) == Company(others=2)
    assert [run.node_names for run in companions(mine)] == ["c[1-2]", "c1"]


def test_a_run_that_has_not_started_has_no_company_to_say(ada, disk_target) -> None:
    assert company_of(make_run(ada, disk_target)) is None


def test_many_runs_get_their_company_in_the_query_that_reads_them(
    ada, bob, disk_target, django_assert_num_queries
) -> None:
    for start in range(0, 200, 10):
        ran(ada, disk_target, start, start + 15)
        ran(bob, disk_target, start, start + 5)

    with django_assert_num_queries(1):
        found = [company(run) for run in annotated(BenchmarkRun.objects.filter(user=ada.user))]

    assert len(found) == 20 and all(c.mine >= 1 and c.others >= 1 for c in found)


@pytest.mark.parametrize(
    "directory, in_memory, shared, node_local",
    [
        ("/srv/storagelab/scratch/ada", False, True, False),
        ("$TMPDIR", False, True, True),
        ("$TMPDIR/ada", False, True, True),
        ("$TMPDIR/../ada", False, True, False),  # no variable names it (jobs/places.py)
        ("/dev/shm/storagelab/ada", True, True, True),
        ("/local/ada", False, False, True),
    ],
)
def test_the_database_says_which_runs_are_node_local_as_the_run_does(
    ada, disk_target, directory: str, in_memory: bool, shared: bool, node_local: bool
) -> None:
    disk_target.shared = shared
    disk_target.save()
    run = make_run(ada, disk_target, target_directory=directory, in_memory=in_memory)

    in_sql = BenchmarkRun.objects.annotate(local=run_node_local()).get(pk=run.pk).local

    assert run.node_local == in_sql == node_local


def test_the_most_runs_at_once_while_a_group_went() -> None:
    spans = [(0, 10, "a"), (5, 15, "b"), (6, 8, "b"), (10, 20, "a"), (30, 40, "c")]

    assert most_at_once(spans) == {"a": 3, "b": 3, "c": 1}
