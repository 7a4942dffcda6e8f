"""A site profile's `[targets.purge]` table: which files the site's purge removes from a
target, as data the purge preview (exercises/quotas/scans.py) reads.

    [[targets]]
    key = "scratch"
    ...
    [targets.purge]
    days = 14              # files not used for this many days are removed
    by = "access"          # access (the file's atime) | modify (its mtime)
    exempt = ["keep/*"]    # paths below the user's directory the purge leaves alone

A target without the table has no purge by age; its `purge_policy` text may still say
what the site does (a job's $TMPDIR removed when the job ends).
"""

from typing import Any

from django.core.exceptions import ValidationError

from exercises.catalogue.models import PurgeBy, StorageTarget, validate_purge_exempt

FIELDS = {"days", "by", "exempt"}


def save_purge(target: StorageTarget, table: dict[str, Any] | None) -> None:
    """Sets (or, without a table, clears) the target's purge. Raises ValueError for a bad
    table; the profile loader turns it into a clear error."""
    if table is None:
        target.purge_days, target.purge_by, target.purge_exempt = None, PurgeBy.ACCESS, []
        target.save(update_fields=["purge_days", "purge_by", "purge_exempt"])
        return
    where = f"target {target.key!r}: purge"
    if not isinstance(table, dict):
        raise ValueError(f"{where} must be a table")
    unknown = set(table) - FIELDS
    if unknown:
        raise ValueError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
    days = table.get("days")
    if not isinstance(days, int) or isinstance(days, bool) or not 1 <= days <= 3650:
        raise ValueError(f"{where}: days must be a whole number of days from 1 to 3650")
    by = table.get("by", PurgeBy.ACCESS)
    if by not in PurgeBy.values:
        raise ValueError(f"{where}: by must be one of {', '.join(PurgeBy.values)}")
    exempt = table.get("exempt", [])
    try:
        validate_purge_exempt(exempt)
    except ValidationError as e:
        raise ValueError(f"{where}: {e.messages[0]}") from None
    target.purge_days, target.purge_by, target.purge_exempt = days, by, exempt
    target.save(update_fields=["purge_days", "purge_by", "purge_exempt"])
