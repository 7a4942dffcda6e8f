"""A run's page on a target that compresses: the space its files took beside its
figure, or why there is none to show."""

import pytest
from django.test import Client

from jobs.models import BenchmarkRun, RunResult, RunStatus

pytestmark = pytest.mark.django_db


def completed(run: BenchmarkRun, **space: int) -> str:
    target = run.target
    target.compression, target.stored_by = "zstd, on every write", "btrfs"
    target.save()
    BenchmarkRun.objects.filter(pk=run.pk).update(status=RunStatus.COMPLETED)
    RunResult.objects.create(run=run, engine="fio", processes=1, write_bytes_per_s=2**27, **space)
    client = Client()
    client.force_login(run.user)
    return client.get(f"/jobs/runs/{run.key}/").content.decode()


def test_the_page_shows_what_was_written_and_stored(run: BenchmarkRun) -> None:
    page = completed(run, held_bytes=128 * 2**20, stored_bytes=56 * 2**20)

    table = page[page.index('id="space"') :].split("</table>")[0]
    assert "which compresses them (zstd, on every write)" in table
    for said in ("128 MiB", "56 MiB", "2.3× less space"):
        assert said in table


def test_a_run_with_no_space_says_why(run: BenchmarkRun) -> None:
    page = completed(run)

    assert "this run has no space to show: its benchmark left no files behind" in page
