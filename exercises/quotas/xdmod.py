"""Open XDMoD's storage input (its ETL reads these from etl_data.d/storage/): a list of
one object per user and mount point, sizes in bytes, `dt` in UTC.

    [{"resource": "home", "mountpoint": "/home", "user": "alice", "pi": "alice",
      "dt": "2026-01-01T00:00:00Z", "soft_threshold": 0, "hard_threshold": 1073741824,
      "file_count": 12, "logical_usage": 4096, "physical_usage": 4096}]

`resource` is the target's key: name the XDMoD storage resources the same way. The
portal knows no PIs, so `pi` is the user. The quota tools report one size, so logical
and physical usage are the same figure. A limit of 0 means none, as in the tools.
"""

from datetime import UTC

from exercises.catalogue.models import SiteProfile, StorageTarget
from exercises.quotas.ondemand import current_quotas


def mountpoint(target: StorageTarget) -> str:
    """'/srv/storagelab/home/{user}' -> '/srv/storagelab/home'."""
    return target.path_template.split("{user}", 1)[0].rstrip("/") or "/"


def export(profile: SiteProfile) -> list[dict]:
    rows = []
    for quota in current_quotas(profile):
        user = quota.account.username
        rows.append(
            {
                "resource": quota.target.key,
                "mountpoint": mountpoint(quota.target),
                "user": user,
                "pi": user,
                "dt": quota.collected_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "soft_threshold": quota.bytes_soft or 0,
                "hard_threshold": quota.bytes_hard or 0,
                "file_count": quota.files_used or 0,
                "logical_usage": quota.bytes_used,
                "physical_usage": quota.bytes_used,
            }
        )
    return rows
