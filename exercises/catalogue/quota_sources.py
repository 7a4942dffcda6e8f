"""A site profile's `[targets.quota]` table: which collector reports a target's usage.

    [[targets]]
    key = "scratch"
    ...
    [targets.quota]
    collector = "lustre"      # local | lustre | beegfs7 | beegfs8 | gpfs | nfs | ondemand
    filesystem = "/scratch"   # what the tool is asked about (mount point, device[:fileset])

A target without the table has no collector; an Open OnDemand quota file may still fill
it (QUOTA_ONDEMAND_FILES).
"""

from typing import Any

from exercises.catalogue.models import QuotaSource, StorageTarget

FIELDS = {"collector", "filesystem"}


def save_quota_source(target: StorageTarget, table: dict[str, Any] | None) -> None:
    """Sets (or, without a table, removes) the target's quota source. Raises ValueError or
    ValidationError for a bad table; the profile loader turns those into a clear error."""
    if table is None:
        QuotaSource.objects.filter(target=target).delete()
        return
    if not isinstance(table, dict):
        raise ValueError(f"target {target.key!r}: quota must be a table")
    unknown = set(table) - FIELDS
    if unknown:
        names = ", ".join(sorted(unknown))
        raise ValueError(f"target {target.key!r}: unknown quota field(s) {names}")
    source = QuotaSource.objects.filter(target=target).first() or QuotaSource(target=target)
    source.collector = table.get("collector", "")
    source.filesystem = table.get("filesystem", "")
    source.full_clean()
    source.save()
