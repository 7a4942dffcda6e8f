"""Runs in the admin: found by their owner, key or job id, looked at, never edited
(a run's figures are what its job measured). One action: attach the output of runs
whose post never arrived, read from their job's output file (jobs/recover.py)."""

import threading

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from jobs.models import BenchmarkRun
from jobs.recover import RecoveryRefused, attach, read_own_file

# A file on a hung mount blocks its reader: the page does not wait for it longer.
ATTACH_WAIT_SECONDS = 10


@admin.register(BenchmarkRun)
class BenchmarkRunAdmin(admin.ModelAdmin):
    list_display = (
        "key", "user", "exercise", "target", "course", "status", "slurm_job_id", "created_at",
    )  # fmt: skip
    list_filter = ("status", "target__profile", "course", "engine")
    search_fields = ("key", "user__username", "cluster_username", "slurm_job_id")
    list_select_related = ("user", "exercise", "target", "course")
    date_hierarchy = "created_at"
    actions = ["attach_output"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[BenchmarkRun]:
        return super().get_queryset(request).defer("raw_output", "job_script")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_attach_output_permission(self, request: HttpRequest) -> bool:
        # Nobody edits a run here; attaching its output is the one change made to it.
        return request.user.has_perm("jobs.change_benchmarkrun")

    @admin.action(
        description="Attach the output from the job's output file", permissions=["attach_output"]
    )
    def attach_output(self, request: HttpRequest, runs: QuerySet[BenchmarkRun]) -> None:
        for run in runs:
            level, text = _attach_within(run, ATTACH_WAIT_SECONDS)
            self.message_user(request, text, level)


def _attach_within(run: BenchmarkRun, seconds: float) -> tuple[int, str]:
    """attach(), its file read in a thread the page stops waiting for after `seconds`."""

    def read(run: BenchmarkRun) -> str:
        text: list[str | RecoveryRefused] = []

        def reader() -> None:
            try:
                text.append(read_own_file(run))
            except RecoveryRefused as e:
                text.append(e)

        thread = threading.Thread(target=reader, daemon=True)
        thread.start()
        thread.join(seconds)
        if not text:
            raise RecoveryRefused(
                f"its output file did not answer within {seconds:g} s (a hung filesystem?). "
                f"Where the target is mounted: manage.py attach_result {run.key}"
            )
        if isinstance(text[0], RecoveryRefused):
            raise text[0]
        return text[0]

    try:
        return messages.SUCCESS, attach(run, read)
    except RecoveryRefused as e:
        return messages.ERROR, f"Run {run.key}: {e}"
