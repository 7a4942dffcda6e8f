"""Before a benchmark starts: do its files fit in what is left of the quota on the target?"""

from django.utils import timezone

from exercises.catalogue.models import StorageTarget
from exercises.quotas.models import Quota
from exercises.quotas.status import meters
from jobs.engines import Workload
from portal.models import ClusterAccount

# Besides the benchmark's files a run creates its own directory and Slurm's output file.
RUN_OVERHEAD_FILES = 2


def needs(workload: Workload) -> tuple[int, int]:
    """Bytes and files a run writes: every process writes size_per_process, into its own
    files_per_process files, or all into one shared file."""
    files = workload.processes * workload.files_per_process if workload.file_per_process else 1
    return workload.processes * workload.size_per_process, files + RUN_OVERHEAD_FILES


def quota_problem(account: ClusterAccount, target: StorageTarget, workload: Workload) -> str | None:
    """Why the run would not fit on `target`, or None. Unknown figures are no reason to
    refuse: the filesystem itself still enforces the quota."""
    return quota_problems(account, [target], workload)[0]


def quota_problems(
    account: ClusterAccount, targets: list[StorageTarget], workload: Workload
) -> list[str | None]:
    """quota_problem for each of `targets`, in their order (1 query)."""
    quotas = {q.target_id: q for q in Quota.objects.filter(account=account, target__in=targets)}
    return [_problem(quotas.get(target.pk), account, target, workload) for target in targets]


def _problem(
    quota: Quota | None, account: ClusterAccount, target: StorageTarget, workload: Workload
) -> str | None:
    if quota is None or not quota.known:
        return None
    need_bytes, need_files = needs(workload)
    for meter, need in zip(meters(quota), (need_bytes, need_files), strict=False):
        if meter.limit is None:
            continue
        left = max(meter.limit - meter.used, 0)
        if need > left:
            what = "space" if meter.what == "Space" else "files"
            # "needs 512 MiB, only 512 MiB left" reads as no reason: rounded alike, left
            # is a little under it.
            shown = meter.show(left)
            shown = f"a little under {shown}" if shown == meter.show(need) else f"only {shown}"
            return (
                f"This run needs {meter.show(need)} on {target.name}, but "
                f"{shown} of your {what} quota is left there ({meter.text}, "
                f"collected {timezone.localtime(quota.collected_at):%Y-%m-%d %H:%M}). Free some "
                f"{what} in {target.directory_for(account.username)} or choose another target, "
                "then try again."
            )
    return None
