"""The endpoint jobs post their output to: authenticated by the per-run secret,
size-capped, accepted once."""

from datetime import timedelta
from pathlib import Path

import pytest
from django.test import Client, RequestFactory
from django.utils import timezone
from kombu.exceptions import OperationalError

from jobs.models import BenchmarkRun, RunResult, RunStatus
from jobs.results import INGEST_GRACE_SECONDS, ingest, ingest_result, token_hash
from jobs.sync import sync
from jobs.views import run_result
from tests.runs import make_run

pytestmark = pytest.mark.django_db

TOKEN = "the-per-run-secret"
SAMPLE = Path(__file__).parent / "samples" / "fio-seq-write-1p.json"


@pytest.fixture
def run(make_user, disk_target) -> BenchmarkRun:
    user = make_user("sl-trainee7")
    return make_run(user.cluster_account, disk_target, result_token_hash=token_hash(TOKEN))


def post(client: Client, run: BenchmarkRun, body: bytes = b"{}", token: str = TOKEN, **headers):
    return client.post(
        f"/jobs/runs/{run.key}/result",
        body,
        content_type="text/plain",
        headers={"X-Storagelab-Token": token, "X-Benchmark-Exit": "0", **headers},
    )


def test_it_accepts_a_result_once(client: Client, run: BenchmarkRun) -> None:
    assert post(client, run, b"first").status_code == 202
    second = post(client, run, b"second")

    assert second.status_code == 409
    run.refresh_from_db()
    assert run.raw_output == "first"
    assert run.benchmark_exit_code == 0


def test_it_refuses_a_forged_token(client: Client, run: BenchmarkRun) -> None:
    response = post(client, run, b"forged", token="guess")

    assert response.status_code == 403
    run.refresh_from_db()
    assert run.result_received_at is None and run.raw_output == ""


def test_it_refuses_a_result_over_the_size_cap(client, run, settings) -> None:
    settings.RESULT_MAX_BYTES = 10
    assert post(client, run, b"x" * 11).status_code == 413
    run.refresh_from_db()
    assert run.result_received_at is None


def test_a_token_is_refused_once_its_run_ended_longer_ago_than_the_jobs_retries(
    client: Client, run: BenchmarkRun, settings
) -> None:
    """A run's secret lives in its job's environment and its script: one read there
    long after the run (a node's leftovers, a copied log) posts nothing."""
    settings.RESULT_RETRY_SECONDS = 600
    ended = timezone.now() - timedelta(seconds=601)
    BenchmarkRun.objects.filter(pk=run.pk).update(status=RunStatus.COMPLETED, ended_at=ended)

    response = post(client, run, b"late")

    assert response.status_code == 403
    said = response.content.decode()
    assert "result token has expired" in said and "600 s after its end" in said
    run.refresh_from_db()
    assert run.result_received_at is None and run.raw_output == ""
    # A wrong secret is still told only that: nothing of the run's times.
    assert post(client, run, b"late", token="guess").content.decode() == "wrong result token\n"


def test_a_token_is_taken_within_the_retries_after_the_end_and_while_the_run_goes(
    client: Client, run: BenchmarkRun, make_user, disk_target, settings
) -> None:
    settings.RESULT_RETRY_SECONDS = 600
    ended = timezone.now() - timedelta(seconds=590)
    BenchmarkRun.objects.filter(pk=run.pk).update(status=RunStatus.COMPLETED, ended_at=ended)
    going = make_run(
        make_user("sl-trainee8").cluster_account,
        disk_target,
        result_token_hash=token_hash(TOKEN),
        status=RunStatus.RUNNING,
        started_at=timezone.now() - timedelta(days=2),
    )

    assert post(client, run, b"in time").status_code == 202
    assert post(client, going, b"still going").status_code == 202


def test_it_answers_404_for_an_unknown_run(client: Client, run: BenchmarkRun) -> None:
    response = client.post(
        "/jobs/runs/00000000-0000-0000-0000-000000000000/result",
        b"{}",
        content_type="text/plain",
        headers={"X-Storagelab-Token": TOKEN},
    )
    assert response.status_code == 404


def test_it_accepts_only_posts(client: Client, run: BenchmarkRun) -> None:
    assert client.get(f"/jobs/runs/{run.key}/result").status_code == 405


def test_a_garbled_result_is_kept_with_a_clear_parse_error(client, run) -> None:
    post(client, run, b'fio: something went wrong\n{ "jobs": [', **{"X-Benchmark-Exit": "1"})
    ingest(run.pk)

    run.refresh_from_db()
    assert run.parse_error
    assert "exited with status 1" in run.parse_error
    assert "something went wrong" in run.raw_output
    assert not hasattr(run, "result")


def raw_post(run: BenchmarkRun, body: bytes, token: str = TOKEN, **meta: str):
    """A post whose headers the test client would not send as they are."""
    request = RequestFactory().post(
        f"/jobs/runs/{run.key}/result",
        body,
        content_type="text/plain",
        headers={"X-Storagelab-Token": token},
    )
    request.META.update(meta)
    return run_result(request, key=str(run.key))


@pytest.mark.parametrize(
    "meta",
    [
        {"CONTENT_LENGTH": "12abc"},
        {"CONTENT_LENGTH": "-1"},
        {"HTTP_X_BENCHMARK_EXIT": "--5"},
        {"HTTP_X_BENCHMARK_EXIT": "99999999999"},
        {"HTTP_X_BENCHMARK_EXIT": "²"},
        {"HTTP_X_BENCHMARK_EXIT": ""},
    ],
    ids=[
        "length-text",
        "length-negative",
        "exit-double-minus",
        "exit-huge",
        "exit-unicode",
        "exit-empty",
    ],
)
def test_a_malformed_header_is_a_400_and_stores_nothing(run: BenchmarkRun, meta) -> None:
    response = raw_post(run, b"{}", **meta)

    assert response.status_code == 400
    assert list(meta)[0].removeprefix("HTTP_").replace("_", "-").lower() in (
        response.content.decode().lower()
    )
    run.refresh_from_db()
    assert run.result_received_at is None


def test_the_secret_is_checked_before_the_headers(run: BenchmarkRun) -> None:
    response = raw_post(run, b"{}", token="guess", CONTENT_LENGTH="12abc")
    assert response.status_code == 403


@pytest.fixture
def broker_down(monkeypatch) -> None:
    """Queuing the ingest fails as Celery does with Redis unreachable."""

    def refuse(*args, **kwargs):
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(ingest_result, "delay", refuse)


def test_a_result_that_comes_while_the_broker_is_down_is_kept_and_sent_again_by_the_sync(
    client, run, broker_down, django_capture_on_commit_callbacks, monkeypatch
) -> None:
    BenchmarkRun.objects.filter(pk=run.pk).update(status=RunStatus.COMPLETED)
    with django_capture_on_commit_callbacks(execute=True):
        response = post(client, run, SAMPLE.read_bytes())
    assert response.status_code == 202  # the job is told it was received: no retries

    sent: list[int] = []
    monkeypatch.setattr(ingest_result, "delay", sent.append)  # the broker is back
    sync()
    assert sent == []  # the first task may still be on its way

    BenchmarkRun.objects.filter(pk=run.pk).update(
        result_received_at=timezone.now() - timedelta(seconds=INGEST_GRACE_SECONDS),
        ingest_sent_at=timezone.now() - timedelta(seconds=INGEST_GRACE_SECONDS),
    )
    sync()
    assert sent == [run.pk]
    assert not RunResult.objects.filter(run=run).exists()  # the sync itself parses nothing

    ingest_result(run.pk)  # as the results worker runs the task
    assert RunResult.objects.get(run=run).write_bytes_per_s > 0
