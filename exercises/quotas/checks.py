"""Before a benchmark starts: do its files fit in what is left of the quota on the target?

`run_problems` is the quota rule of admission (jobs/admission.py), which every run the
portal starts passes: this app registers it there from its ready()."""

from django.utils import timezone

from exercises.catalogue.models import StorageTarget
from exercises.quotas.models import Quota
from exercises.quotas.status import meters
from jobs.engines import Workload
from jobs.models import BenchmarkRun
from jobs.room import need
from portal.models import ClusterAccount


def needs(workload: Workload) -> tuple[int, int]:
    """Bytes (whole blocks a file) and files a run takes (jobs/room.py)."""
    taken = need(workload)
    return taken.bytes, taken.files


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


def run_problems(account: ClusterAccount, runs: list[BenchmarkRun]) -> list[str | None]:
    """quota_problem for each run, on its own target with its own workload (1 query)."""
    targets = {run.target_id for run in runs}
    quotas = {q.target_id: q for q in Quota.objects.filter(account=account, target__in=targets)}
    return [
        _problem(quotas.get(run.target_id), account, run.target, run.workload_params)
        for run in runs
    ]


def files_known(account: ClusterAccount, targets: list[StorageTarget]) -> set[int]:
    """The targets (ids) where a limit of the account's files is known, collected and
    current: there the quota check counts files; elsewhere only the filesystem does
    (1 query)."""
    quotas = Quota.objects.filter(account=account, target__in=targets)
    return {
        q.target_id
        for q in quotas
        if q.known and any(m.what == "Files" and m.limit is not None for m in meters(q))
    }


def _problem(
    quota: Quota | None, account: ClusterAccount, target: StorageTarget, workload: Workload
) -> str | None:
    if quota is None or not quota.known:
        return None
    need_bytes, need_files = needs(workload)
    for meter, wanted in zip(meters(quota), (need_bytes, need_files), strict=False):
        if meter.limit is None:
            continue
        left = max(meter.limit - meter.used, 0)
        if wanted > left:
            what = "space" if meter.what == "Space" else "files"
            # "needs 512 MiB, only 512 MiB left" reads as no reason: rounded alike, left
            # is a little under it.
            shown = meter.show(left)
            shown = f"a little under {shown}" if shown == meter.show(wanted) else f"only {shown}"
            return (
                f"This run needs {meter.show(wanted)} on {target.name}, but "
                f"{shown} of your {what} quota is left there ({meter.text}, "
                f"collected {timezone.localtime(quota.collected_at):%Y-%m-%d %H:%M}). Free some "
                f"{what} in {target.directory_for(account.username)} or choose another target, "
                "then try again."
            )
    return None
