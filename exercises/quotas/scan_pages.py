"""What My storage, its banner and `storage_outlook` say of the account's latest scan:
per target, what the next purges take (now, within 1, 3 and 7 days) and what fills the
directory, in words, from the checked answer scans.py stored."""

from dataclasses import dataclass
from datetime import datetime
from functools import cached_property

from django.conf import settings
from django.utils import timezone
from django.utils.timesince import timesince, timeuntil

from exercises.catalogue.models import StorageTarget
from exercises.quotas.models import StorageScan
from portal.units import iec

WINDOWS = (("0", "now"), ("1", "within a day"), ("3", "within 3 days"), ("7", "within 7 days"))
BANNER_DAYS = "3"  # a purge due within this many days is in the banner
LISTED = 20  # files named per target (storage_outlook's purge_due.paths too)


@dataclass(frozen=True)
class DueFile:
    path: str  # below the user's directory
    full_path: str
    bytes: int
    due_at: datetime

    @property
    def when(self) -> str:
        now = timezone.now()
        if self.due_at <= now:
            return f"due {timesince(self.due_at, now, depth=1)} ago: the next purge removes it"
        return f"in {timeuntil(self.due_at, now, depth=1)}"


@dataclass(frozen=True)
class Directory:
    path: str
    bytes: int
    files: int
    children: list["Directory"]

    @property
    def size(self) -> str:
        return iec(self.bytes)


@dataclass
class TargetScan:
    """One target's part of a scan."""

    target: StorageTarget
    walk: dict
    directory: str

    @property
    def state(self) -> str:
        return self.walk["state"]

    @property
    def complete(self) -> bool:
        return self.state == "done"

    @property
    def note(self) -> str:
        """Why the figures are partial or missing, in words; '' when complete."""
        if self.state in ("missing", "unreadable"):
            return f"Not scanned: {self.walk['why']}."
        parts = []
        if self.state == "stopped":
            parts.append(
                f"The scan stopped early ({self.walk['why']}): the figures below count the "
                f"{self.walk['entries']:,} entries it saw, not the whole directory."
            )
        if self.walk.get("unreadable"):
            parts.append(f"{self.walk['unreadable']:,} directories could not be read.")
        return " ".join(parts)

    @property
    def summary(self) -> str:
        return (
            f"{self.walk.get('entries', 0):,} entries, {iec(self.walk.get('bytes', 0))}, "
            f"walked in {self.walk.get('seconds', 0):.1f} s"
        )

    @property
    def purged(self) -> bool:
        """The site purges this target (its profile says so) and the scan looked."""
        return bool(self.target.purge_days) and self.walk.get("purge") is not None

    def due(self, window: str) -> tuple[int, int]:
        """(files, bytes) due within the window: "0" (now), "1", "3" or "7" days."""
        tally = self.walk["purge"]["due"][window]
        return tally["files"], tally["bytes"]

    @property
    def windows(self) -> list[tuple[str, int, str]]:
        """(when, files, bytes in words) for each window of the purge."""
        return [(said, *self._due_words(key)) for key, said in WINDOWS] if self.purged else []

    def _due_words(self, key: str) -> tuple[int, str]:
        files, size = self.due(key)
        return files, iec(size)

    @cached_property
    def due_files(self) -> list[DueFile]:
        """The listed files due within 7 days, soonest first."""
        if not self.purged:
            return []
        return [
            DueFile(
                path=f["path"],
                full_path=f"{self.directory}/{f['path']}",
                bytes=f["bytes"],
                due_at=datetime.fromtimestamp(f["due_at"], tz=timezone.get_current_timezone()),
            )
            for f in sorted(self.walk["purge"]["files"], key=lambda f: (f["due_at"], f["path"]))
        ]

    @property
    def due_soon(self) -> bool:
        return self.purged and self.due(BANNER_DAYS)[0] > 0

    @property
    def due_sentence(self) -> str:
        if not self.purged:
            return ""
        now, _ = self.due("0")
        week, week_bytes = self.due("7")
        if not week:
            return "Nothing of yours is due for purge within 7 days."
        files = f"{week:,} file{'s' if week != 1 else ''}"
        first = f"{files} ({iec(week_bytes)}) fall due within 7 days"
        if now:
            return f"{first}; {now:,} of them are due now: the next purge removes them."
        return f"{first}."

    @cached_property
    def by_bytes(self) -> list[Directory]:
        return sorted(self._dirs, key=lambda d: (-d.bytes, d.path))[: settings.SCAN_TOP]

    @cached_property
    def by_files(self) -> list[Directory]:
        return sorted(self._dirs, key=lambda d: (-d.files, d.path))[: settings.SCAN_TOP]

    @cached_property
    def _dirs(self) -> list[Directory]:
        def one(d: dict) -> Directory:
            children = [one({**c, "children": []}) for c in d.get("children", [])]
            children.sort(key=lambda c: (-c.bytes, c.path))
            return Directory(d["path"], d["bytes"], d["files"], children)

        return [one(d) for d in self.walk.get("dirs", [])]


@dataclass
class ScanState:
    """The account's latest scan (and the one going), for My storage."""

    latest: StorageScan | None  # the latest that ended
    going: StorageScan | None
    targets: dict[int, TargetScan]  # by target pk, from `latest` when it is done

    @property
    def when(self) -> str:
        if self.latest is None or self.latest.ended_at is None:
            return ""
        return f"{timesince(self.latest.ended_at, depth=1)} ago"

    @property
    def failed(self) -> str:
        if self.latest is not None and self.latest.status == StorageScan.Status.FAILED:
            return self.latest.error
        return ""

    def of(self, target: StorageTarget) -> TargetScan | None:
        return self.targets.get(target.pk)


def state_of(account, targets: list[StorageTarget]) -> ScanState:
    """The account's scans as My storage shows them (1 query: only one goes at a time,
    so the newest two hold the one going and the latest that ended)."""
    newest = list(
        StorageScan.objects.filter(account=account, kind=StorageScan.Kind.SCAN).order_by(
            "-started_at"
        )[:2]
    )
    going = next((s for s in newest if s.status == StorageScan.Status.SUBMITTED), None)
    latest = next((s for s in newest if s.status != StorageScan.Status.SUBMITTED), None)
    found: dict[int, TargetScan] = {}
    if latest is not None and latest.status == StorageScan.Status.DONE:
        for target in targets:
            walk = latest.found.get(target.key)
            if walk is not None and target.variable is None:
                found[target.pk] = TargetScan(target, walk, target.directory_for(account.username))
    return ScanState(latest=latest, going=going, targets=found)


def purge_due(ts: TargetScan) -> dict | None:
    """storage_outlook's purge_due: counts and bytes at 1, 3 and 7 days (and now), and the
    paths of up to LISTED files, soonest due first."""
    if not ts.purged:
        return None
    return {
        **{f"within_{key}_days" if key != "0" else "now": _tally(ts, key) for key, _ in WINDOWS},
        "paths": [f.full_path for f in ts.due_files[:LISTED]],
    }


def _tally(ts: TargetScan, key: str) -> dict:
    files, size = ts.due(key)
    return {"files": files, "bytes": size}


def largest_dirs(ts: TargetScan) -> list[dict]:
    return [
        {
            "path": f"{ts.directory}/{d.path}" if d.path != "." else ts.directory,
            "bytes": d.bytes,
            "files": d.files,
        }
        for d in ts.by_bytes
    ]
