"""A lab run's own Darshan logs: the job script that records them, the endpoint the
job sends them to (its run's secret, a size cap, once), their reading in the sandbox,
and what the run page says when there is its I/O and when there is none."""

import subprocess
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from jobio.models import RunLog
from jobs.models import BenchmarkRun, RunStatus
from jobs.results import token_hash
from jobs.scripts import render_script
from tests.jobio.logs import log
from tests.runs import make_run

pytestmark = pytest.mark.django_db

TOKEN = "the-per-run-secret"
RUNTIME = "/opt/site/darshan/lib/libdarshan.so"


@pytest.fixture
def run(make_user, disk_target) -> BenchmarkRun:
    user = make_user("sl-darshan1")
    return make_run(
        user.cluster_account,
        disk_target,
        result_token_hash=token_hash(TOKEN),
        status=RunStatus.COMPLETED,
        job_script="LD_PRELOAD=/x.so fio ...",
        result_received_at=timezone.now(),
    )


def send(client: Client, run: BenchmarkRun, body: bytes, token: str = TOKEN, **headers):
    return client.post(
        f"/check-my-job/runs/{run.key}/logs",
        body,
        content_type="application/octet-stream",
        headers={"X-Storagelab-Token": token, **headers},
    )


def two_processes() -> tuple[bytes, str]:
    """Two real fio logs, as one run's two processes would send them."""
    logs = [log("random-4k").read_bytes(), log("sequential-1m").read_bytes()]
    return b"".join(logs), ",".join(str(len(data)) for data in logs)


def io_page(client: Client, run: BenchmarkRun) -> str:
    client.force_login(run.user)
    return client.get(f"/check-my-job/runs/{run.key}/io").content.decode()


# --- the job script -------------------------------------------------------------


def test_the_script_preloads_the_sites_runtime_for_the_run_directory_only(run, settings) -> None:
    settings.RUN_DARSHAN_RUNTIME = RUNTIME
    script = render_script(run)

    assert f"LD_PRELOAD={RUNTIME} DARSHAN_ENABLE_NONMPI=1" in script
    # Darshan records the run's own files only, the path's dots and dashes literal.
    escaped = run.run_directory.replace(".", "[.]").replace("-", "[-]")
    assert f"'NAME_INCLUDE ^{escaped}/ POSIX'" in script
    assert f"/check-my-job/runs/{run.key}/logs" in script
    assert subprocess.run(["bash", "-n"], input=script.encode()).returncode == 0


def test_without_a_runtime_nothing_is_preloaded_and_the_page_says_nothing(
    run, settings, client
) -> None:
    settings.RUN_DARSHAN_RUNTIME = ""
    script = render_script(run)
    run.job_script = script
    run.save()

    assert "LD_PRELOAD" not in script and "DARSHAN" not in script
    assert subprocess.run(["bash", "-n"], input=script.encode()).returncode == 0
    assert "as Darshan saw it" not in io_page(client, run)


def test_a_run_directory_a_regular_expression_cannot_name_plainly_is_not_recorded(
    run, settings
) -> None:
    settings.RUN_DARSHAN_RUNTIME = RUNTIME
    run.target_directory = "/srv/a+b/c"

    assert "LD_PRELOAD" not in render_script(run)


def test_a_run_in_memory_is_not_recorded_and_its_page_says_why(
    run, tmpfs_target, settings, client
) -> None:
    settings.RUN_DARSHAN_RUNTIME = RUNTIME
    run.target, run.in_memory = tmpfs_target, True
    run.target_directory = tmpfs_target.directory_for(run.cluster_username)
    run.job_script = render_script(run)
    run.save()

    assert "LD_PRELOAD" not in run.job_script
    assert "Runs on a target in memory are not recorded" in io_page(client, run)
    settings.RUN_DARSHAN_IN_MEMORY = True
    assert "LD_PRELOAD" in render_script(run)


# --- the endpoint ---------------------------------------------------------------


def test_the_logs_are_taken_once_with_the_runs_secret(client, run, tasks_run_at_commit) -> None:
    body, sizes = two_processes()

    assert send(client, run, body, token="guess", **{"X-Darshan-Sizes": sizes}).status_code == 403
    assert send(client, run, body, **{"X-Darshan-Sizes": sizes}).status_code == 202
    assert send(client, run, body, **{"X-Darshan-Sizes": sizes}).status_code == 409

    row = RunLog.objects.get(run=run)
    assert bytes(row.logs) == body  # kept with the run
    assert row.io["nprocs"] == 2


@pytest.mark.parametrize("sizes", ["", "12,x", "1,2", "0," + "9" * 3, "1" + ",1" * 16])
def test_sizes_that_do_not_add_up_are_refused(client, run, sizes) -> None:
    body, _ = two_processes()

    response = send(client, run, body, **{"X-Darshan-Sizes": sizes})

    assert response.status_code == 400
    assert not RunLog.objects.filter(run=run).exists()


def test_logs_over_the_cap_are_refused_unread(client, run, settings) -> None:
    settings.RUN_DARSHAN_MAX_BYTES = 1000
    body, sizes = two_processes()

    assert send(client, run, body, **{"X-Darshan-Sizes": sizes}).status_code == 413
    assert not RunLog.objects.filter(run=run).exists()


def test_the_runs_io_shows_on_its_page_and_goes_with_the_run(
    client, run, tasks_run_at_commit, dev_profile
) -> None:
    body, sizes = two_processes()
    send(client, run, body, **{"X-Darshan-Sizes": sizes})

    page = io_page(client, run)

    assert "What this run did, as Darshan saw it" in page
    assert "2 files, in the run's directory" not in page and "2 processes" in page
    assert 'id="jobio-data"' in page and 'id="sizes-table"' in page
    run.delete()
    assert not RunLog.objects.exists()


def test_a_runs_log_that_is_not_its_exercises_io_is_named_by_the_log(
    client, run, tasks_run_at_commit, dev_profile
) -> None:
    # A run of 1a whose one process wrote 4 KiB blocks at random offsets.
    run.exercise = dev_profile.exercises.get(key="1a")
    run.save(update_fields=["exercise"])
    data = log("random-4k").read_bytes()
    send(client, run, data, **{"X-Darshan-Sizes": str(len(data))})

    page = io_page(client, run)

    assert "the I/O of exercise <strong>2a · " in page
    assert ", not what 1a does." in page
    assert 'id="io-model"' not in page  # Check my job names it 2a too


def test_only_the_owner_and_staff_see_a_runs_io(client, run, make_user) -> None:
    client.force_login(make_user("sl-darshan2"))
    assert client.get(f"/check-my-job/runs/{run.key}/io").status_code == 404
    staff = make_user("sl-darshan3")
    staff.is_staff = True
    staff.save()
    client.force_login(staff)
    assert client.get(f"/check-my-job/runs/{run.key}/io").status_code == 200


# --- no I/O, and why ------------------------------------------------------------


def test_a_log_cut_short_keeps_the_figure_and_says_why_there_is_no_io(
    client, run, tasks_run_at_commit
) -> None:
    data = log("random-4k").read_bytes()
    cut = data[: len(data) // 2]

    assert send(client, run, cut, **{"X-Darshan-Sizes": str(len(cut))}).status_code == 202

    page = io_page(client, run)
    assert "could not be read" in page and "cut short" in page
    assert 'id="jobio-data"' not in page


def test_logs_of_some_of_the_runs_processes_are_not_shown_as_the_whole_run(
    client, run, tasks_run_at_commit
) -> None:
    # Four ranks, two logs: the others' stayed on another node.
    run.workload = {**run.workload, "processes": 4}
    run.save()
    body, sizes = two_processes()
    send(client, run, body, **{"X-Darshan-Sizes": sizes})

    page = io_page(client, run)

    assert "Logs came from 2 of the run&#x27;s 4 processes" in page
    assert 'id="jobio-data"' not in page


def test_ranks_that_only_opened_the_file_still_make_the_run_whole(
    client, run, dev_profile, tasks_run_at_commit
) -> None:
    # Collective buffering: one aggregator wrote; the other three opened the file and
    # handed it their pieces (their logs hold opens, no reads or writes).
    run.workload = {**run.workload, "processes": 4}
    run.save()
    logs = [log("sequential-1m").read_bytes()] + [log("no-io").read_bytes()] * 3
    sizes = ",".join(str(len(data)) for data in logs)
    send(client, run, b"".join(logs), **{"X-Darshan-Sizes": sizes})

    page = io_page(client, run)

    assert "Logs came from" not in page
    assert 'id="jobio-data"' in page
    assert "Darshan recorded 2,048 writes of 1 MiB one after another, one process" in page


def test_a_job_that_wrote_no_log_says_so(client, run) -> None:
    assert send(client, run, b"", **{"X-Darshan-Missing": "none"}).status_code == 202
    assert send(client, run, b"", **{"X-Darshan-Missing": "none"}).status_code == 409

    assert "Darshan wrote no log" in io_page(client, run)


def test_an_unknown_reason_is_refused(client, run) -> None:
    assert send(client, run, b"", **{"X-Darshan-Missing": "nonsense"}).status_code == 400


@pytest.mark.parametrize(
    "status, received_ago, says, polls",
    [
        (RunStatus.RUNNING, None, "once the run has ended", True),
        (RunStatus.COMPLETED, 5, "follows the result", True),
        (RunStatus.COMPLETED, 600, "No Darshan log arrived", False),
        (RunStatus.CANCELLED, None, "ended cancelled", False),
    ],
)
def test_while_no_log_has_come_the_page_says_what_to_expect(
    client, run, status, received_ago, says, polls
) -> None:
    run.status = status
    run.result_received_at = (
        timezone.now() - timedelta(seconds=received_ago) if received_ago else None
    )
    run.ended_at = run.result_received_at
    run.save()

    client.force_login(run.user)
    response = client.get(f"/check-my-job/runs/{run.key}/io")

    assert says in response.content.decode()
    assert (response.status_code == 200) == polls  # 286: the page stops asking


def test_a_forged_secret_learns_nothing_else(client, run) -> None:
    """The secret is checked first: without it, a malformed post is a 403 too."""
    answer = send(client, run, b"xx", token="guess", **{"X-Darshan-Sizes": "1,x"})

    assert answer.status_code == 403
    assert not RunLog.objects.filter(run=run).exists()


def test_logs_whose_read_never_began_say_so_and_are_not_followed_for_ever(client, run) -> None:
    body, sizes = two_processes()
    send(client, run, body, **{"X-Darshan-Sizes": sizes})  # its task never runs here
    client.force_login(run.user)
    url = f"/check-my-job/runs/{run.key}/io"
    assert client.get(url).status_code == 200  # reading: followed

    an_hour_ago = timezone.now() - timedelta(hours=1)
    RunLog.objects.filter(run=run).update(received_at=an_hour_ago, sent_at=an_hour_ago)
    answer = client.get(url)

    assert answer.status_code == 286
    assert "were never read" in answer.content.decode()
