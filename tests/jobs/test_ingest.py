"""Reading a job's output cannot hold the workers: any output the parser chokes on is
marked once with a one-line reason, the sync only sends reads to the results queue
(never parses), a reader killed twice is not tried a third time, and what is marked
is never tried again."""

from datetime import timedelta
from pathlib import Path

import pytest
from celery.exceptions import SoftTimeLimitExceeded
from django.utils import timezone

from jobs import results
from jobs.models import BenchmarkRun, RunResult, RunStatus
from jobs.results import (
    INGEST_GRACE_SECONDS,
    MAX_INGEST_ATTEMPTS,
    ingest,
    ingest_result,
    send_stranded,
)
from portal.celery import app
from tests.runs import make_run

pytestmark = pytest.mark.django_db
SAMPLES = Path(__file__).parent / "samples"

# What a trainee may post with their own run's token: fio's JSON nested beyond
# Python's recursion limit, and an IOR summary with a number of 5,000 digits.
DEEP_FIO = '{"fio version": "fio-3.33", "jobs": ' + "[" * 200_000
HUGE_IOR = '{"Version": "4.0.0", "summary": [{"operation": "write", "bwMaxMIB": ' + "9" * 5000


@pytest.fixture
def received(make_user, disk_target):
    """A run whose output arrived a while ago, with `output` as its text."""

    def make(output: str, engine: str = "fio", **fields) -> BenchmarkRun:
        user = make_user("sl-trainee7")
        long_ago = timezone.now() - timedelta(seconds=INGEST_GRACE_SECONDS + 1)
        return make_run(
            user.cluster_account,
            disk_target,
            engine=engine,
            status=RunStatus.COMPLETED,
            raw_output=output,
            result_received_at=long_ago,
            ingest_sent_at=long_ago,
            **fields,
        )

    return make


@pytest.fixture
def sent(monkeypatch) -> list[int]:
    """The ingest tasks sent, instead of sending them to the broker."""
    calls: list[int] = []
    monkeypatch.setattr(ingest_result, "delay", calls.append)
    return calls


@pytest.mark.parametrize(("engine", "output"), [("fio", DEEP_FIO), ("ior", HUGE_IOR)])
def test_an_output_the_parser_chokes_on_is_marked_with_a_one_line_reason(
    received, engine, output
) -> None:
    run = received(output, engine=engine)

    ingest(run.pk)

    run.refresh_from_db()
    assert run.parse_error and "\n" not in run.parse_error
    assert len(run.parse_error) < 500
    assert run.raw_output == output  # kept for its owner to look at
    assert not RunResult.objects.filter(run=run).exists()


def test_the_sync_sends_a_stranded_output_to_the_results_queue_and_never_parses_it(
    received, sent, monkeypatch
) -> None:
    run = received(DEEP_FIO)
    monkeypatch.setattr(results, "parse_output", pytest.fail)

    assert send_stranded() == 1

    assert sent == [run.pk]
    run.refresh_from_db()
    assert run.parse_error == ""
    # Sent once per grace period, not at every cycle of the sync (every 2 s).
    assert send_stranded() == 0 and sent == [run.pk]


def test_a_stranded_output_is_sent_again_once_its_grace_is_over(received, sent) -> None:
    run = received("fio output")
    send_stranded()
    BenchmarkRun.objects.filter(pk=run.pk).update(
        ingest_sent_at=timezone.now() - timedelta(seconds=INGEST_GRACE_SECONDS + 1)
    )

    send_stranded()

    assert sent == [run.pk, run.pk]


def test_an_output_marked_unreadable_is_never_tried_again(received, sent, monkeypatch) -> None:
    run = received(DEEP_FIO)
    ingest(run.pk)
    monkeypatch.setattr(results, "parse_output", pytest.fail)

    assert send_stranded() == 0
    ingest(run.pk)  # a duplicate task

    assert sent == []
    run.refresh_from_db()
    assert run.ingest_attempts == 1


def test_an_output_whose_reader_was_killed_twice_is_marked_without_a_third_read(
    received, monkeypatch
) -> None:
    run = received("anything", ingest_attempts=MAX_INGEST_ATTEMPTS)
    monkeypatch.setattr(results, "parse_output", pytest.fail)

    ingest(run.pk)

    run.refresh_from_db()
    assert f"reading this output was stopped {MAX_INGEST_ATTEMPTS} times" in run.parse_error


def test_a_read_past_the_soft_time_limit_is_marked_as_too_slow(received, monkeypatch) -> None:
    run = received("anything")

    def slow(engine: str, output: str):
        raise SoftTimeLimitExceeded()

    monkeypatch.setattr(results, "parse_output", slow)

    ingest(run.pk)

    run.refresh_from_db()
    assert run.parse_error.startswith("reading this output took longer than")


def test_reading_runs_on_its_own_queue_within_time_limits() -> None:
    route = app.amqp.router.route({}, ingest_result.name)

    assert route["queue"].name == "results"
    assert 0 < ingest_result.soft_time_limit < ingest_result.time_limit <= 60


def test_a_lost_run_whose_unreadable_output_came_is_completed(received) -> None:
    run = received(DEEP_FIO)
    BenchmarkRun.objects.filter(pk=run.pk).update(status=RunStatus.LOST)

    ingest(run.pk)

    run.refresh_from_db()
    assert run.status == RunStatus.COMPLETED and run.parse_error


def test_a_space_line_is_read_only_where_the_target_measures_what_was_stored(
    received, disk_target
) -> None:
    """The job of a target that compresses adds the line; on any other target the same
    line is the job owner's text, and no run page may show it as a space."""
    output = (SAMPLES / "fio-seq-write-1p.json").read_text() + (
        "Storage Lab: stored 58720256 of 134217728 bytes\n"
    )
    plain = received(output)
    ingest(plain.pk)
    assert RunResult.objects.get(run=plain).space is None

    disk_target.compression, disk_target.stored_by = "zstd", "btrfs"
    disk_target.save()
    RunResult.objects.filter(run=plain).delete()  # the same output, read again
    ingest(plain.pk)
    space = RunResult.objects.get(run=plain).space
    assert (space.held, space.stored) == (128 * 2**20, 56 * 2**20)
