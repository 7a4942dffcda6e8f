"""Open OnDemand quota files (version 1), read and written, so a site whose scripts
already produce them for the OnDemand dashboard is served at once:

    {"version": 1, "timestamp": 1700000000,
     "quotas": [{"type": "user", "user": "alice", "path": "/home/alice",
                 "total_block_usage": 1024, "block_limit": 2048,
                 "total_file_usage": 5, "file_limit": 10}]}

Blocks are KiB (OnDemand requires 1 KB blocks); a limit of 0 means none. A "fileset"
entry is repeated per user with the fileset's total usage and limit, which is what runs
full, so that is what we keep. An entry serves a target when the user's directory on it
is the entry's path or lies below it (the longest such path wins). Targets whose quota
source is another collector are left to it.

The export adds a key OnDemand does not read, `storagelab_outlook`: the forecast and the
purge its entries have no field for (outlook.py), per user and path.
"""

import json
import math
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from django.conf import settings
from django.db.models import Q
from django.utils import timezone
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from exercises.catalogue.models import QuotaCollector, SiteProfile
from exercises.quotas.models import Quota
from exercises.quotas.outlook import concerns
from exercises.quotas.store import record_failure, record_unexpected, record_usage
from exercises.quotas.usage import Usage
from portal.children import run_bounded
from portal.models import ClusterAccount
from portal.units import KiB, MiB

MAX_FILE_BYTES = 256 * MiB
ONDEMAND = QuotaCollector.ONDEMAND
PROBLEMS_SHOWN = 5


class OnDemandFileError(ValueError):
    """The file as a whole cannot be used; nothing from it is stored."""


class Entry(BaseModel):
    model_config = ConfigDict(extra="ignore")

    type: Literal["user", "fileset"] = "user"
    user: str = Field(min_length=1, max_length=64)
    path: str = Field(pattern=r"^/", max_length=4096)
    total_block_usage: int = Field(ge=0)
    block_limit: int = Field(default=0, ge=0)
    total_file_usage: int | None = Field(default=None, ge=0)
    file_limit: int = Field(default=0, ge=0)

    def usage(self) -> Usage:
        return Usage(
            bytes_used=self.total_block_usage * KiB,
            bytes_hard=self.block_limit * KiB or None,
            files_used=self.total_file_usage,
            files_hard=self.file_limit or None,
        )


class Document(BaseModel):
    version: Literal[1]
    timestamp: float = Field(gt=0)
    quotas: list[Any]


@dataclass
class Parsed:
    collected_at: datetime
    entries: list[Entry]
    problems: list[str]


def parse(text: str, name: str) -> Parsed:
    """Reads one file's text. A bad entry is named and skipped; a bad file is refused."""
    try:
        document = Document.model_validate(json.loads(text))
    except json.JSONDecodeError as e:
        raise OnDemandFileError(f"{name}: not JSON ({e.msg} at line {e.lineno})") from None
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the top level"
        raise OnDemandFileError(
            f"{name}: not an OnDemand quota file version 1 ({where}: {first['msg']})"
        ) from None
    entries, problems = [], []
    for index, raw in enumerate(document.quotas):
        try:
            entries.append(Entry.model_validate(raw))
        except ValidationError as e:
            first = e.errors()[0]
            field_name = ".".join(str(p) for p in first["loc"]) or "entry"
            problems.append(f"{name}: quotas[{index}] skipped ({field_name}: {first['msg']})")
    return Parsed(datetime.fromtimestamp(document.timestamp, UTC), entries, problems)


# The child that reads a file: its bytes on stdout, or why not on stderr (status 3).
READER = """
import sys
try:
    with open(sys.argv[1], "rb") as f:
        sys.stdout.buffer.write(f.read(int(sys.argv[2]) + 1))
except OSError as e:
    sys.stderr.write(e.strerror or str(e))
    sys.exit(3)
"""


def read(path: str) -> Parsed:
    """The file at `path`, read by a child given QUOTA_COMMAND_TIMEOUT, as the other
    collectors' tools are: a file on a hung mount blocks its reader for good, and a
    round must not wait with it."""
    timeout = settings.QUOTA_COMMAND_TIMEOUT
    argv = [sys.executable, "-I", "-c", READER, path, str(MAX_FILE_BYTES)]
    try:
        code, data, said = run_bounded(
            argv, seconds=timeout, output_max=MAX_FILE_BYTES + 1, cwd=Path("/"), env=READER_ENV
        )
    except TimeoutError:
        raise OnDemandFileError(
            f"{path}: not read within {timeout:g} s (a hung mount?); skipped this round"
        ) from None
    if code != 0:
        reason = said.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"status {code}"]
        raise OnDemandFileError(f"{path}: cannot be read ({reason[0][:200]})")
    if len(data) > MAX_FILE_BYTES:
        raise OnDemandFileError(f"{path}: larger than {MAX_FILE_BYTES // MiB} MiB")
    try:
        return parse(data.decode("utf-8"), path)
    except UnicodeDecodeError:
        raise OnDemandFileError(f"{path}: not UTF-8 text") from None


READER_ENV = {"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"}


@dataclass
class ImportResult:
    stored: int = 0
    older: int = 0  # entries older than the figures we hold: ignored
    failed: int = 0
    notes: list[str] = field(default_factory=list)


def _served_targets(profile: SiteProfile, target_key: str) -> tuple[list, set[int]]:
    """Targets an OnDemand file may fill, and those that rely on it (source ondemand)."""
    targets = profile.targets.filter(
        Q(quota_source__isnull=True) | Q(quota_source__collector=QuotaCollector.ONDEMAND)
    ).select_related("quota_source")
    if target_key:
        targets = targets.filter(key=target_key)
    targets = list(targets)
    relying = {t.pk for t in targets if hasattr(t, "quota_source")}
    return targets, relying


def _best(entries: list[tuple[datetime, Entry]], directory: str):
    fitting = [
        (when, e)
        for when, e in entries
        if directory == e.path.rstrip("/") or directory.startswith(e.path.rstrip("/") + "/")
    ]
    return max(fitting, key=lambda pair: (len(pair[1].path), pair[0]), default=None)


def import_files(
    paths: list[str],
    profile: SiteProfile,
    *,
    accounts: list[ClusterAccount] | None = None,
    target_key: str = "",
) -> ImportResult:
    result = ImportResult()
    targets, relying = _served_targets(profile, target_key)
    if not paths and not relying:
        return result
    by_user: dict[str, list[tuple[datetime, Entry]]] = {}
    file_errors: list[str] = []
    for path in paths:
        try:
            parsed = read(path)
        except OnDemandFileError as e:
            file_errors.append(str(e))
            continue
        result.notes += parsed.problems[:PROBLEMS_SHOWN]
        if len(parsed.problems) > PROBLEMS_SHOWN:
            result.notes.append(f"{path}: {len(parsed.problems) - PROBLEMS_SHOWN} more skipped")
        for entry in parsed.entries:
            by_user.setdefault(entry.user, []).append((parsed.collected_at, entry))
    result.notes = file_errors + result.notes
    accounts = list(ClusterAccount.objects.all()) if accounts is None else accounts
    for account in accounts:
        for target in targets:
            user = account.username
            try:
                found = _best(by_user.get(user, []), target.directory_for(user))
                if found:
                    when, entry = found
                    stored = record_usage(account, target, ONDEMAND, entry.usage(), when)
                    result.stored += stored is not None
                    result.older += stored is None
                elif target.pk in relying:
                    record_failure(account, target, ONDEMAND, _no_entry(user, paths, file_errors))
                    result.failed += 1
            except Exception as e:  # a figure the database refuses: this one only
                record_unexpected(account, target, ONDEMAND, e)
                result.failed += 1
    known = {a.username for a in accounts}
    strangers = len(set(by_user) - known)
    if strangers:
        result.notes.append(f"{strangers} user(s) in the files have no cluster account here")
    return result


def _no_entry(user: str, paths: list[str], file_errors: list[str]) -> str:
    if file_errors:
        return "; ".join(file_errors)
    if not paths:
        return "no Open OnDemand quota file is configured (QUOTA_ONDEMAND_FILES)"
    return f"no entry for {user} in the Open OnDemand quota files"


def export(profile: SiteProfile, now: datetime | None = None) -> dict:
    """The current figures as an OnDemand quota file (the soft limit where there is one:
    that is where trouble starts)."""
    now = now or timezone.now()
    quotas = []
    for quota in _current(profile):
        user = quota.account.username
        block_limit = quota.bytes_soft or quota.bytes_hard
        quotas.append(
            {
                "type": "user",
                "user": user,
                "path": quota.target.directory_for(user),
                "total_block_usage": math.ceil(quota.bytes_used / KiB),
                "block_limit": math.ceil(block_limit / KiB) if block_limit else 0,
                "total_file_usage": quota.files_used or 0,
                "file_limit": quota.files_soft or quota.files_hard or 0,
            }
        )
    return {
        "version": 1,
        "timestamp": int(now.timestamp()),
        "quotas": quotas,
        "storagelab_outlook": _outlook(profile),
    }


def _outlook(profile: SiteProfile) -> list[dict]:
    """What OnDemand's entries have no field for, beside them: who fills within 7 days
    (days_to_full) and whose files the purge takes within 3 (purge_due_files, bytes), per
    user and path as its entries (outlook.py). OnDemand reads `quotas` only."""
    return [concern.as_data() for concern in concerns(profile)]


def _current(profile: SiteProfile):
    """Figures whose last collection worked: exports never carry stale or unknown ones."""
    return (
        Quota.objects.filter(
            target__profile=profile, error="", bytes_used__isnull=False, collected_at__isnull=False
        )
        .select_related("account", "target")
        .order_by("account__username", "target__order")
    )


def current_quotas(profile: SiteProfile) -> list[Quota]:
    return list(_current(profile))
