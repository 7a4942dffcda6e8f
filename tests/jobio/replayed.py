"""A replay's runs as they come back, set here: completed in turn with given figures."""

from datetime import timedelta

from django.utils import timezone

from jobio.models import Replay
from jobs.models import RunResult, RunStatus

MiB = 2**20


def measured(replay: Replay, figures: dict[str, float], field: str = "write_bytes_per_s") -> None:
    """The replay's runs completed in turn, 10 s apart, with these figures (MiB/s, or
    creates a second for `field` create_ops_s), by target key."""
    start = timezone.now() - timedelta(hours=1)
    for n, run in enumerate(replay.runs.select_related("target").order_by("target__order")):
        run.status = RunStatus.COMPLETED
        run.started_at = start + timedelta(seconds=10 * n)
        run.ended_at = run.started_at + timedelta(seconds=8)
        run.save(update_fields=["status", "started_at", "ended_at"])
        value = figures[run.target.key] * (MiB if field.endswith("bytes_per_s") else 1)
        RunResult.objects.create(run=run, engine=replay.engine, processes=1, **{field: value})
