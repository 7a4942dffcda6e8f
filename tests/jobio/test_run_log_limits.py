"""A run's Darshan logs reach the C log reader only as Check my job's uploads do: for a
run whose job recorded them, once, within the result's retry window, under their
owner's limits (logs in line, bytes waiting, runs' logs an hour), a trainee's runs
that end together waiting for their turn. A refusal is one line for the job, final for
its script, and a sentence on the run page."""

import os
import re
import subprocess
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.core.files.base import ContentFile
from django.db import transaction
from django.test import Client
from django.utils import timezone

from jobio import checks, runs
from jobio.models import JobCheck, RunLog
from jobio.tasks import end_lost_checks, read_run_logs
from jobs.models import BenchmarkRun, RunStatus
from jobs.results import token_hash
from jobs.scripts import render_script
from tests.jobio.logs import log
from tests.names import unique_name
from tests.runs import make_run

pytestmark = pytest.mark.django_db

TOKEN = "the-per-run-secret"
RUNTIME = "/opt/site/darshan/lib/libdarshan.so"


@pytest.fixture
def trainee(make_user):
    """A trainee of this file: a login with a cluster account of its own name."""
    return make_user(unique_name("sl-logcaps"))


@pytest.fixture
def make_completed_run(trainee, disk_target):
    """Makes a run (one per call) of the trainee's cluster account, on `target`, whose
    result just came, as its job posts logs: make_run with this file's account bound."""

    def make(target=disk_target, **fields) -> BenchmarkRun:
        return make_run(
            trainee.cluster_account,
            target,
            **{
                "result_token_hash": token_hash(TOKEN),
                "status": RunStatus.COMPLETED,
                "job_script": f"LD_PRELOAD={RUNTIME} fio ...",
                "result_received_at": timezone.now(),
                **fields,
            },
        )

    return make


@pytest.fixture
def sent(monkeypatch) -> list[int]:
    """The runs whose logs were handed to the reader's queue (read by no one here),
    sent as the commit would (a test's transaction never commits)."""
    calls: list[int] = []
    monkeypatch.setattr(read_run_logs, "delay", calls.append)
    immediate = SimpleNamespace(atomic=transaction.atomic, on_commit=lambda f, **kw: f())
    monkeypatch.setattr("jobio.tasks.transaction", immediate)
    return calls


def one_log() -> tuple[bytes, str]:
    data = log("random-4k").read_bytes()
    return data, str(len(data))


def send(client: Client, run: BenchmarkRun, body: bytes | None = None, **headers):
    if body is None and "X-Darshan-Missing" not in headers:
        body, headers["X-Darshan-Sizes"] = one_log()
    return client.post(
        f"/check-my-job/runs/{run.key}/logs",
        body or b"",
        content_type="application/octet-stream",
        headers={"X-Storagelab-Token": TOKEN, **headers},
    )


def io_fragment(client: Client, run: BenchmarkRun):
    client.force_login(run.user)
    return client.get(f"/check-my-job/runs/{run.key}/io")


def assert_one_line(answer, status: int) -> str:
    """A refusal as the job reads it: a plain one-line text, never a page or a trace."""
    text = answer.content.decode()
    assert answer.status_code == status, text
    assert answer["Content-Type"].startswith("text/plain")
    assert text.endswith("\n") and text.count("\n") == 1 and "Traceback" not in text
    return text


# --- which runs, and when -----------------------------------------------------------


def test_logs_of_a_run_whose_job_recorded_none_are_refused_and_nothing_is_kept(
    client, make_completed_run, sent
) -> None:
    run = make_completed_run(job_script="#!/bin/bash\nfio ...")  # its script preloaded nothing

    text = assert_one_line(send(client, run), 403)

    assert "did not record it with Darshan" in text
    assert not RunLog.objects.filter(run=run).exists() and sent == []
    page = io_fragment(client, run).content.decode()
    assert "as Darshan saw it" not in page  # no card: the run never promised its I/O


def test_a_run_in_memory_refuses_logs_and_its_page_says_why_it_has_none(
    client, make_completed_run, tmpfs_target, settings, sent
) -> None:
    settings.RUN_DARSHAN_RUNTIME = RUNTIME
    run = make_completed_run(target=tmpfs_target)  # in memory: its script records nothing
    run.job_script = render_script(run)
    run.save()

    assert_one_line(send(client, run), 403)

    assert (
        "Runs on a target in memory are not recorded" in io_fragment(client, run).content.decode()
    )
    assert not RunLog.objects.filter(run=run).exists()


def test_a_second_post_for_one_run_is_a_409_and_the_first_stays(
    client, make_completed_run, sent
) -> None:
    run = make_completed_run()
    body, sizes = one_log()

    assert send(client, run, body, **{"X-Darshan-Sizes": sizes}).status_code == 202
    again = send(client, run, b"x" * 10, **{"X-Darshan-Sizes": "10"})
    missing = send(client, run, **{"X-Darshan-Missing": "none"})

    assert_one_line(again, 409)
    assert_one_line(missing, 409)
    row = RunLog.objects.get(run=run)
    assert bytes(row.logs) == body and not row.missing
    assert sent == [run.pk]  # read once


def test_logs_before_the_runs_result_are_refused_and_nothing_is_kept(
    client, make_completed_run, sent
) -> None:
    run = make_completed_run(status=RunStatus.RUNNING, result_received_at=None)

    text = assert_one_line(send(client, run), 403)

    assert "result has not arrived" in text
    assert not RunLog.objects.filter(run=run).exists() and sent == []


def test_logs_after_the_retry_window_are_refused_and_the_page_says_why(
    client, make_completed_run, sent, settings
) -> None:
    settings.RESULT_RETRY_SECONDS = 600
    now = timezone.now()
    run = make_completed_run(result_received_at=now - timedelta(seconds=601), ended_at=None)

    text = assert_one_line(send(client, run), 403)

    assert "taken for 600 s after it ended" in text
    assert sent == []
    assert bytes(RunLog.objects.get(run=run).logs) == b""  # the bytes are not kept
    answer = io_fragment(client, run)
    assert answer.status_code == 286  # nothing more to wait for
    assert "came more than 10 minutes after the run ended" in answer.content.decode()
    assert_one_line(send(client, run), 409)  # and it stays refused


def test_logs_posted_long_after_the_run_ended_meet_an_expired_token_and_nothing_is_kept(
    client, make_completed_run, sent, settings
) -> None:
    """Its result attached by staff lately, the run ended long ago: the run's secret
    ended with the job's retries (jobs/results.py: posts_until), so nothing is kept."""
    settings.RESULT_RETRY_SECONDS = 600
    now = timezone.now()
    run = make_completed_run(
        result_received_at=now - timedelta(seconds=10), ended_at=now - timedelta(seconds=601)
    )

    text = assert_one_line(send(client, run), 403)

    assert "result token has expired" in text
    assert sent == [] and not RunLog.objects.filter(run=run).exists()


def test_logs_within_the_window_after_the_run_ended_are_taken(
    client, make_completed_run, sent
) -> None:
    now = timezone.now()
    run = make_completed_run(result_received_at=now - timedelta(seconds=30), ended_at=now)

    assert send(client, run).status_code == 202
    assert sent == [run.pk]


# --- their owner's limits -----------------------------------------------------------


def test_logs_beyond_the_bytes_their_owner_has_waiting_are_refused_and_the_page_says_why(
    client, make_completed_run, trainee, sent, settings
) -> None:
    body, sizes = one_log()
    settings.DARSHAN_USER_MAX_BYTES = len(body) + 100
    # An upload not read yet.
    checks.from_upload(trainee, ContentFile(b"x" * 200, name="job.darshan"))
    run = make_completed_run()

    text = assert_one_line(send(client, run, body, **{"X-Darshan-Sizes": sizes}), 403)

    assert "waiting to be read would be more than" in text
    page = io_fragment(client, run).content.decode()
    assert (
        "your Darshan logs waiting to be read (your lab runs&#x27; and your checks&#x27;) " in page
    )
    assert "run the exercise again once the others are read" in page
    assert sent == [] and bytes(RunLog.objects.get(run=run).logs) == b""


def test_runs_logs_beyond_the_hourly_count_are_refused_and_the_page_says_why(
    client, make_completed_run, trainee, sent, settings
) -> None:
    """A lab user runs many short exercises: their runs' logs have an hourly count of
    their own (RUN_DARSHAN_PER_HOUR), apart from the checks they start."""
    settings.RUN_DARSHAN_PER_HOUR = 2
    settings.DARSHAN_CHECKS_PER_HOUR = 1
    first, second, third = make_completed_run(), make_completed_run(), make_completed_run()

    assert send(client, first).status_code == 202
    assert send(client, second).status_code == 202
    text = assert_one_line(send(client, third), 403)

    assert "2 times this hour" in text
    page = io_fragment(client, third).content.decode()
    assert "the portal had already taken the logs of 2 of your runs in that hour" in page
    assert "run the exercise again in the next hour" in page
    # A job that wrote none says so whatever the count: it costs the reader nothing.
    assert send(client, make_completed_run(), **{"X-Darshan-Missing": "none"}).status_code == 202
    # Their checks have their own count: the hour's one check still starts (once the
    # runs' logs in line are read).
    RunLog.objects.filter(run__user=trainee).update(io={"read": True})
    checks.from_upload(trainee, ContentFile(b"x", name="job.darshan"))
    assert JobCheck.objects.filter(user=trainee).count() == 1


def test_a_trainees_runs_ending_together_wait_for_their_turn_and_are_all_read(
    client, make_completed_run, sent, settings
) -> None:
    settings.DARSHAN_CHECKS_GOING = 2
    together = [make_completed_run() for _ in range(4)]

    for run in together:
        assert send(client, run).status_code == 202

    assert sent == [together[0].pk, together[1].pk]  # two with the reader at once
    waiting = io_fragment(client, together[2])
    assert waiting.status_code == 200  # followed
    assert "wait for your others to be read" in waiting.content.decode()

    read_run_logs(together[0].pk)  # the reader, as the worker runs it

    assert RunLog.objects.get(run=together[0]).io is not None
    assert sent == [together[0].pk, together[1].pk, together[2].pk]  # the next took its place
    assert RunLog.objects.get(run=together[3]).sent_at is None


def test_a_users_runs_logs_in_line_count_among_their_checks_going(
    client, make_completed_run, trainee, sent, settings
) -> None:
    settings.DARSHAN_CHECKS_GOING = 2
    for run in (make_completed_run(), make_completed_run()):
        send(client, run)

    with pytest.raises(checks.CheckRefused, match="2 of your Darshan logs are being read"):
        checks.from_upload(trainee, ContentFile(b"x" * 100, name="job.darshan"))


def test_a_lost_read_frees_its_place_and_the_sweep_hands_on_the_next(
    client, make_completed_run, sent, settings
) -> None:
    settings.DARSHAN_CHECKS_GOING = 1
    lost, next_one = make_completed_run(), make_completed_run()
    send(client, lost), send(client, next_one)
    assert sent == [lost.pk]
    long_ago = timezone.now() - timedelta(seconds=checks.RUN_LOGS_QUEUE_WAIT_SECONDS + 1)
    RunLog.objects.filter(run=lost).update(sent_at=long_ago)  # its message was lost

    end_lost_checks()

    assert sent == [lost.pk, next_one.pk]
    assert "were never read" in io_fragment(client, lost).content.decode()
    end_lost_checks()  # nothing more: the next one has its place
    assert sent == [lost.pk, next_one.pk]


# --- the job's side ---------------------------------------------------------------


def send_logs_function(script: str) -> str:
    """The script's functions that post the logs, as the job runs them: send_logs and
    the post every job script makes (templates/jobs/post_back.sh)."""
    return "".join(
        re.search(rf"^{name}\(\) \{{\n.*?^\}}\n", script, re.S | re.M).group(0)
        for name in ("post_back", "send_logs")
    )


@pytest.mark.parametrize("status, posts", [("403", 1), ("409", 1), ("503", range(2, 10_000))])
def test_the_job_takes_a_refusal_as_final_and_tries_again_only_while_the_portal_is_away(
    make_completed_run, settings, tmp_path, status, posts, monkeypatch
) -> None:
    settings.RUN_DARSHAN_RUNTIME = RUNTIME
    monkeypatch.setattr("jobs.scripts.DARSHAN_POST_SECONDS", 1)  # its pauses stubbed below
    run = make_completed_run()
    function = send_logs_function(render_script(run))
    bin_dir, logs = tmp_path / "bin", tmp_path / "darshan" / "logs"
    bin_dir.mkdir(), logs.mkdir(parents=True)
    (logs / "fio.darshan").write_bytes(one_log()[0])
    for name, body in [
        ("curl", f'echo x >>"{tmp_path}/posts"; printf {status}'),
        ("sleep", ":"),
    ]:
        stub = bin_dir / name
        stub.write_text(f"#!/bin/sh\n{body}\n")
        stub.chmod(0o755)

    subprocess.run(
        ["bash", "-c", f'say() {{ :; }}\n{function}\nsecret=/dev/null darshan_dir="$1"\nsend_logs',
         "-", str(logs.parent)],
        env={**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"},
        check=False,  # a refusal returns 1: the job goes on to its end all the same
        capture_output=True,
    )  # fmt: skip

    sent = len(Path(tmp_path / "posts").read_text().splitlines())
    assert sent in posts if isinstance(posts, range) else sent == posts


def test_the_page_reason_of_every_refusal_fits_its_field() -> None:
    limit = RunLog._meta.get_field("missing").max_length
    for _job, page in (runs.LATE, runs.OVER_BYTES, runs.OVER_HOUR):
        assert len(page.format(minutes=1440, mib=1_000_000, limit=1_000_000)) <= limit
