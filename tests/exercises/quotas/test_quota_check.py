"""Before a benchmark starts, the portal checks that its files fit in what is left of
the quota on each chosen target; if not, it starts nothing and says what to do."""

import pytest

from exercises.quotas.checks import needs, quota_problem
from exercises.quotas.store import record_failure
from jobs.engines.base import Pattern, Workload
from jobs.models import BenchmarkRun
from portal.units import GiB, MiB
from tests.quotas import dev_target, fill

pytestmark = pytest.mark.django_db


def start(client, *targets: str, exercise: str = "1a"):
    return client.post(f"/lab/{exercise}/runs", {"targets": list(targets)})


def test_a_run_that_does_not_fit_starts_nothing_and_says_what_to_do(client, ada_account) -> None:
    fill(
        ada_account, "scratch", 10 * GiB - 8 * MiB, bytes_hard=10 * GiB
    )  # 8 MiB left; 1a writes 64 MiB
    client.force_login(ada_account.user)

    response = start(client, "home", "scratch")

    assert response.status_code == 400
    page = response.content.decode()
    assert "This run needs 64 MiB on $SCRATCH, but only 8 MiB of your space quota is left" in page
    assert "Free some space in /srv/storagelab/scratch/sl-ada or choose another target" in page
    assert not BenchmarkRun.objects.exists()  # not even on $HOME, where it would fit


def test_what_is_left_reads_as_less_than_the_need_when_both_round_alike(ada_account) -> None:
    fill(ada_account, "scratch", 10 * GiB - 64 * MiB + 12 * 1024, bytes_hard=10 * GiB)
    one = Workload(
        pattern=Pattern.SEQUENTIAL, block_size=MiB, processes=1, size_per_process=64 * MiB
    )

    problem = quota_problem(ada_account, dev_target("scratch"), one)

    # 12 KiB short: not "needs 64 MiB, but only 64 MiB is left".
    assert problem and "needs 64 MiB on $SCRATCH, but a little under 64 MiB of your" in problem


def test_too_many_files_for_the_file_quota_is_refused_too(client, ada_account) -> None:
    fill(ada_account, "tmp", MiB, bytes_hard=2 * GiB, files_used=500, files_hard=1000)
    client.force_login(ada_account.user)

    page = start(client, "tmp", exercise="3").content.decode()  # 8 x 200 small files

    assert "This run needs 1,602 files on $TMPDIR, but only 500 files of your files quota" in page
    assert not BenchmarkRun.objects.exists()


def test_a_run_that_fits_starts(client, ada_account) -> None:
    fill(ada_account, "scratch", 10 * GiB - 65 * MiB, bytes_hard=10 * GiB)
    client.force_login(ada_account.user)

    assert start(client, "scratch").status_code == 302
    assert BenchmarkRun.objects.filter(user=ada_account.user, target__key="scratch").count() == 1


def test_unknown_figures_do_not_block_a_run(client, ada_account) -> None:
    fill(ada_account, "scratch", 10 * GiB, bytes_hard=10 * GiB)  # full, but that was before...
    record_failure(ada_account, dev_target("scratch"), "local", "counting took longer than 30 s")
    client.force_login(ada_account.user)

    assert start(client, "scratch").status_code == 302  # ...and now nobody knows


def test_over_the_soft_limit_nothing_is_left_even_below_the_hard_one(ada_account) -> None:
    fill(ada_account, "global", 6 * GiB, bytes_soft=5 * GiB, bytes_hard=8 * GiB)
    small = Workload(pattern=Pattern.SEQUENTIAL, block_size=MiB, processes=1, size_per_process=MiB)

    problem = quota_problem(ada_account, dev_target("global"), small)

    assert problem and "only 0 B of your space quota is left there" in problem


def test_a_run_needs_every_processs_data_and_files() -> None:
    eight = Workload(
        pattern=Pattern.SEQUENTIAL, block_size=MiB, processes=8, size_per_process=16 * MiB
    )
    shared = eight.model_copy(update={"file_per_process": False})

    assert needs(eight) == (128 * MiB, 8 + 2)  # + the run directory and Slurm's output
    assert needs(shared) == (128 * MiB, 1 + 2)
