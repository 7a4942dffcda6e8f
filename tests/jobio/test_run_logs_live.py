"""A lab run records its own I/O on the live dev cluster: the job preloads the dev
cluster's darshan-runtime into fio, sends its logs after the result, and the run page
shows the I/O Darshan recorded."""

import pytest
from django.conf import settings

from exercises.advisor.job_io import JobIO
from jobs.engines import Pattern
from jobs.submission import start_run
from tests.runs import follow, run_log_of, small_workload

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.skipif(not settings.RUN_DARSHAN_RUNTIME, reason="the dev env names the runtime")
@pytest.mark.parametrize(
    "pattern, processes", [(Pattern.SEQUENTIAL, 1), (Pattern.RANDOM, 8)], ids=["seq-1", "rand-8"]
)
def test_a_run_shows_the_io_darshan_recorded(
    live_portal, dev_profile, trainee_account, disk_target, client, pattern, processes
) -> None:
    run = start_run(
        trainee_account, disk_target, small_workload(pattern, processes), time_limit_minutes=2
    )
    (run,) = follow(run)
    assert run.result.write_mib_s > 0

    row = run_log_of(run)

    assert not row.problem and not row.missing, row.problem or row.missing
    io = JobIO.from_json(row.io)
    # One log per fio job that wrote (fio's parent writes none of the data), and only
    # the run's own files: 4 MiB per process, in the workload's request size.
    assert io.nprocs == processes
    assert io.files == processes
    assert io.bytes_written == processes * 4 * 2**20
    assert io.typical_request_bytes == run.workload_params.block_size
    if pattern == Pattern.RANDOM:
        assert io.sequential_share < 0.7
    else:
        assert io.consecutive_share > 0.95
    client.force_login(trainee_account.user)
    page = client.get(f"/check-my-job/runs/{run.key}/io").content.decode()
    assert "What this run did, as Darshan saw it" in page
    assert f"{'one process' if processes == 1 else f'{processes} processes'}" in page
    assert 'id="jobio-data"' in page
