"""Retention: a run's raw output and its Darshan logs go RAW_OUTPUT_RETENTION_DAYS after
they came, and beyond RAW_OUTPUT_USER_MAX_MB per user (their oldest first); what was
read from them stays (the figures, a parse error, the I/O), the run page says when
the output went, and nothing that reads or attaches outputs takes a dropped one for
one that never came. A round is idempotent and drops in bounded batches."""

from datetime import timedelta

import pytest
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from jobio import runs
from jobio.models import RunLog
from jobs import retention
from jobs.models import BenchmarkRun, RunResult, RunStatus
from jobs.recover import RecoveryRefused, attach
from jobs.results import ingest, ingest_result, send_stranded
from jobs.retention import drop_raw_outputs
from tests.jobio.logs import log
from tests.names import unique_name
from tests.runs import make_run

pytestmark = pytest.mark.django_db

KiB = 1024


@pytest.fixture
def make_trainee(make_user):
    """A login with a cluster account of its own name, one per call."""
    return lambda: make_user(unique_name("sl-keep"))


@pytest.fixture
def old_run(disk_target):
    """A completed run of `user` whose output (of `size` bytes) came `days` ago and was
    read into its figure."""

    def make(user, days: float, size: int = 10 * KiB, read: bool = True) -> BenchmarkRun:
        came = timezone.now() - timedelta(days=days)
        run = make_run(
            user.cluster_account,
            disk_target,
            status=RunStatus.COMPLETED,
            result_received_at=came,
            raw_output="o" * size,
            slurm_job_id=4242,
        )
        if read:
            RunResult.objects.create(
                run=run, engine="fio", processes=1, write_bytes_per_s=200 * 2**20
            )
        return run

    return make


def with_logs(run: BenchmarkRun, size: int | None = None) -> RunLog:
    """The run's logs as its job sent them, read into its I/O (in the sandbox), or
    `size` bytes of them marked read."""
    if size is None:
        data = log("random-4k").read_bytes()
        RunLog.objects.create(run=run, logs=data, sizes=[len(data)], sent_at=timezone.now())
        runs.read(run.pk)
    else:
        RunLog.objects.create(run=run, logs=b"d" * size, sizes=[size], io={"read": True})
    RunLog.objects.filter(run=run).update(received_at=run.result_received_at)
    return RunLog.objects.get(run=run)


def kept(run: BenchmarkRun) -> bool:
    run.refresh_from_db()
    return run.raw_output_dropped_at is None and run.raw_output != ""


def logs_kept(run: BenchmarkRun) -> bool:
    row = RunLog.objects.get(run=run)
    return row.logs_dropped_at is None and bytes(row.logs) != b""


# --- what goes and what stays ------------------------------------------------------


def test_a_run_older_than_the_retention_loses_its_output_and_logs_not_its_figure_or_io(
    old_run, make_trainee, settings, client, dev_profile
) -> None:
    settings.RAW_OUTPUT_RETENTION_DAYS = 90
    ada = make_trainee()
    old, recent = old_run(ada, days=91), old_run(ada, days=89)
    with_logs(old), with_logs(recent)

    drop_raw_outputs()

    assert not kept(old) and kept(recent)
    assert old.raw_output == "" and old.raw_output_dropped_at is not None
    assert RunResult.objects.filter(run=old).exists()  # the figure stays
    row = RunLog.objects.get(run=old)
    assert bytes(row.logs) == b"" and row.logs_dropped_at is not None
    assert row.io["nprocs"] == 1  # its I/O stays, and shows
    client.force_login(ada)
    page = client.get(f"/check-my-job/runs/{old.key}/io").content.decode()
    assert "What this run did, as Darshan saw it" in page and 'id="jobio-data"' in page
    assert logs_kept(recent)


def test_the_run_page_says_when_the_output_was_dropped_instead_of_offering_it(
    old_run, make_trainee, settings, client
) -> None:
    settings.RAW_OUTPUT_RETENTION_DAYS, settings.RAW_OUTPUT_USER_MAX_MB = 90, 200
    ada = make_trainee()
    run = old_run(ada, days=100)
    drop_raw_outputs()
    run.refresh_from_db()
    when = timezone.localtime(run.raw_output_dropped_at)
    client.force_login(ada)

    page = client.get(f"/jobs/runs/{run.key}/").content.decode()
    download = client.get(f"/jobs/runs/{run.key}/output")

    said = (
        f"The raw output was dropped on {when.day} {when:%B %Y}, as the portal keeps raw "
        "outputs for 90 days and up to 200 MiB of each person&#x27;s (their oldest go first)."
    )
    assert said in page
    assert "Download the raw output" not in page and "What fio measured" in page
    assert download.status_code == 410
    assert download.content.decode().startswith(f"The raw output was dropped on {when.day} ")


def test_a_user_over_the_cap_loses_their_oldest_outputs_and_logs_first(
    old_run, make_trainee, settings
) -> None:
    settings.RAW_OUTPUT_RETENTION_DAYS = 0  # the cap alone
    settings.RAW_OUTPUT_USER_MAX_MB = 1
    ada, grace = make_trainee(), make_trainee()
    # Ada's, oldest first: 300 KiB of output with 200 KiB of logs each, 2 MiB in all.
    adas = [old_run(ada, days=d, size=300 * KiB) for d in (4, 3, 2, 1)]
    for run in adas:
        with_logs(run, size=200 * KiB)
    # Grace holds 900 KiB: under the cap, whatever Ada holds.
    graces = [old_run(grace, days=d, size=300 * KiB) for d in (9, 8, 7)]

    drop_raw_outputs()

    # 2,000 KiB less the oldest four pieces (the first two runs) is 1,000 KiB: no more.
    assert [kept(run) for run in adas] == [False, False, True, True]
    assert [logs_kept(run) for run in adas] == [False, False, True, True]
    assert all(kept(run) for run in graces)
    assert all(RunResult.objects.filter(run=run).exists() for run in adas)


def test_an_output_not_read_yet_is_never_dropped(old_run, make_trainee, settings) -> None:
    settings.RAW_OUTPUT_RETENTION_DAYS = 90
    unread = old_run(make_trainee(), days=200, read=False)

    drop_raw_outputs()

    assert kept(unread)


def test_a_round_is_idempotent_and_drops_in_bounded_batches(
    old_run, make_trainee, settings, monkeypatch
) -> None:
    settings.RAW_OUTPUT_RETENTION_DAYS = 90
    monkeypatch.setattr(retention, "BATCH", 2)
    monkeypatch.setattr(retention, "ROUND_BATCHES", 2)
    ada = make_trainee()
    old = [old_run(ada, days=100 + i) for i in range(5)]

    with CaptureQueriesContext(connection) as first:
        drop_raw_outputs()
    drops = [q["sql"] for q in first.captured_queries if q["sql"].startswith("UPDATE")]

    assert len(drops) == 2  # a round stops after ROUND_BATCHES statements of BATCH runs
    assert [kept(run) for run in old] == [True, False, False, False, False]  # oldest first
    drop_raw_outputs()  # the next round goes on
    assert not any(kept(run) for run in old)
    with CaptureQueriesContext(connection) as again:
        drop_raw_outputs()
    assert not [q for q in again.captured_queries if q["sql"].startswith("UPDATE")]


def test_the_round_runs_from_beat_with_the_runs_logs_registered() -> None:
    schedule = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}

    assert drop_raw_outputs.name in schedule
    assert runs.KEPT_LOGS in retention._registered  # jobio's ready(): jobs imports no jobio


# --- a dropped output is not one that never came -----------------------------------------


def test_a_dropped_output_is_not_attached_again(old_run, make_trainee, settings) -> None:
    settings.RAW_OUTPUT_RETENTION_DAYS = 90
    run = old_run(make_trainee(), days=100)
    drop_raw_outputs()
    run.refresh_from_db()

    with pytest.raises(RecoveryRefused, match="read when it came and dropped on"):
        attach(run, read=pytest.fail)  # its file is not even looked for


def test_a_dropped_output_sent_back_to_be_read_is_neither_read_nor_sent(
    old_run, make_trainee, settings, monkeypatch
) -> None:
    """Staff clearing a parse error to have an output read again (a parser fixed): a
    dropped one is not read as an empty output, nor sent by the sync for ever."""
    settings.RAW_OUTPUT_RETENTION_DAYS = 90
    run = old_run(make_trainee(), days=100, read=False)
    BenchmarkRun.objects.filter(pk=run.pk).update(parse_error="fio: no JSON")
    drop_raw_outputs()
    BenchmarkRun.objects.filter(pk=run.pk).update(parse_error="")
    monkeypatch.setattr(ingest_result, "delay", pytest.fail)

    ingest(run.pk)
    assert send_stranded() == 0

    run.refresh_from_db()
    assert run.raw_output_dropped_at and run.parse_error == "" and run.ingest_attempts == 0
