"""Attaching an output whose post never came, from the job's output file: the file is
read only if it is the run's account's own, never through a link; the output is
taken once, and the staff command and the admin's action say what they did."""

import io
import os
import pwd
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth.models import Permission
from django.core.management import CommandError, call_command
from django.utils import timezone

from jobs.models import BenchmarkRun
from jobs.recover import RecoveryRefused, attach, benchmark_output, output_file
from jobs.results import ingest_result
from tests.runs import make_run

pytestmark = pytest.mark.django_db

SAMPLE = (Path(__file__).parent / "samples" / "fio-seq-write-1p.json").read_text()


def job_output(benchmark: str, status: int = 0) -> str:
    """A job's output file as templates/jobs/job_script.sh writes it."""
    return (
        "Storage Lab: running fio in /srv/x/storagelab-run-1 on node1\n"
        f"Storage Lab: the output of fio follows (exit status {status})\n"
        f"{benchmark}"
        "Storage Lab: end of the output of fio\n"
        "Storage Lab: could not send the result to the portal for 600 s (last answer: 000)\n"
    )


@pytest.fixture
def sent(monkeypatch) -> list[int]:
    calls: list[int] = []
    monkeypatch.setattr(ingest_result, "delay", calls.append)
    return calls


@pytest.fixture
def run(trainee_account, disk_target) -> BenchmarkRun:
    return make_run(trainee_account, disk_target, slurm_job_id=81234)


def write_as(path: str, text: str, owner: str) -> None:
    Path(path).write_text(text)
    os.chown(path, *_ids(owner))


def _ids(name: str) -> tuple[int, int]:
    entry = pwd.getpwnam(name)
    return entry.pw_uid, entry.pw_gid


def test_the_output_between_the_scripts_lines_is_attached_once(
    run, sent, django_capture_on_commit_callbacks
) -> None:
    write_as(output_file(run), job_output(SAMPLE, status=3), run.cluster_username)

    with django_capture_on_commit_callbacks(execute=True):
        said = attach(run)

    run.refresh_from_db()
    assert run.raw_output == SAMPLE and run.benchmark_exit_code == 3
    assert sent == [run.pk] and "Attached" in said
    with pytest.raises(RecoveryRefused, match="has its output already"):
        attach(run)
    assert sent == [run.pk]


def test_staff_attach_an_output_after_the_runs_token_expired(
    run, sent, settings, django_capture_on_commit_callbacks
) -> None:
    """The job's secret ends with its retries (jobs/results.py); staff's attach needs none."""
    settings.RESULT_RETRY_SECONDS = 600
    BenchmarkRun.objects.filter(pk=run.pk).update(ended_at=timezone.now() - timedelta(days=1))
    run.refresh_from_db()
    write_as(output_file(run), job_output(SAMPLE), run.cluster_username)

    with django_capture_on_commit_callbacks(execute=True):
        said = attach(run)

    run.refresh_from_db()
    assert "Attached" in said and run.raw_output == SAMPLE and sent == [run.pk]


def test_a_link_in_place_of_the_output_file_is_not_followed(run, sent) -> None:
    secret = Path(run.target_directory) / "not-for-the-portal"
    write_as(str(secret), job_output("root's secret\n"), "root")
    os.symlink(secret, output_file(run))
    os.lchown(output_file(run), *_ids(run.cluster_username))

    with pytest.raises(RecoveryRefused, match="cannot be read here"):
        attach(run)

    run.refresh_from_db()
    assert run.result_received_at is None and sent == []


def test_an_output_file_of_another_account_is_not_read(run, sent) -> None:
    write_as(output_file(run), job_output(SAMPLE), "nobody")

    with pytest.raises(RecoveryRefused, match="not a regular file of the run's account"):
        attach(run)
    assert sent == []


def test_a_target_directory_swapped_for_a_link_is_not_entered(run, sent, tmp_path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.chown(elsewhere, *_ids(run.cluster_username))
    directory = Path(run.target_directory)
    moved = directory.with_name(directory.name + "-moved")
    directory.rename(moved)
    try:
        directory.symlink_to(elsewhere)
        write_as(str(elsewhere / Path(output_file(run)).name), job_output(SAMPLE), "root")

        with pytest.raises(RecoveryRefused, match="cannot be read here"):
            attach(run)
    finally:
        directory.unlink()
        moved.rename(directory)


def test_an_output_cut_short_is_not_attached(run, sent) -> None:
    write_as(
        output_file(run), job_output(SAMPLE).split("Storage Lab: end")[0], run.cluster_username
    )

    with pytest.raises(RecoveryRefused, match="cut short"):
        attach(run)


def test_the_output_file_of_an_older_script_is_read_too() -> None:
    older = (
        "Storage Lab: running fio in /x on node1\n"
        f"{SAMPLE}"
        "curl: (7) Failed to connect to portal port 443: Connection refused\n"
        "Storage Lab: could not send the result to the portal\n"
    )

    assert benchmark_output(older) == (SAMPLE, None)


def test_the_command_says_in_one_line_why_a_run_got_nothing(
    run, sent, django_capture_on_commit_callbacks
) -> None:
    write_as(output_file(run), job_output(SAMPLE), run.cluster_username)
    err = io.StringIO()

    with (
        django_capture_on_commit_callbacks(execute=True),
        pytest.raises(CommandError, match="1 of 2 run"),
    ):
        call_command("attach_result", str(run.key), "not-a-key", stdout=io.StringIO(), stderr=err)

    assert err.getvalue().strip() == "not-a-key: no such run"
    assert sent == [run.pk]


def test_the_admins_action_attaches_and_says_so(client, run, sent, make_user) -> None:
    admin = make_user(superuser=True)
    client.force_login(admin)
    write_as(output_file(run), job_output(SAMPLE), run.cluster_username)

    page = client.post(
        "/admin/jobs/benchmarkrun/",
        {"action": "attach_output", "_selected_action": [run.pk]},
        follow=True,
    )

    assert f"Attached {len(SAMPLE):,} characters of fio output to run {run.key}" in (
        page.content.decode()
    )
    assert BenchmarkRun.objects.get(pk=run.pk).raw_output == SAMPLE


def test_staff_who_may_only_look_at_runs_get_no_attach_action(client, run, make_user) -> None:
    viewer = make_user(staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_benchmarkrun"))
    client.force_login(viewer)

    page = client.get("/admin/jobs/benchmarkrun/")

    assert page.status_code == 200 and str(run.key) in page.content.decode()
    assert "attach_output" not in page.content.decode()


def test_an_output_file_on_the_node_only_is_not_looked_for_here(
    trainee_account, disk_target
) -> None:
    disk_target.path_template = "$TMPDIR"
    disk_target.save()
    run = make_run(trainee_account, disk_target, slurm_job_id=42)

    with pytest.raises(RecoveryRefused, match=r"on the node that ran the job \(\$TMPDIR"):
        attach(run)
