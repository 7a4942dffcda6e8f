"""Parsers for the quota tools sites use, each reading the tool's documented output for
one user into a `Usage`. Anything they cannot read raises QuotaParseError: a figure we
are unsure of is never stored.

- lfs quota -q -u USER MOUNT (Lustre): kbytes, quota, limit, grace, files, quota, limit,
  grace; '*' marks a value over its limit, 0 means no limit, '[n]' an inaccurate value;
  a mount point longer than 15 characters puts the numbers on the next line.
- beegfs-ctl --getquota --csv --uid USER (BeeGFS 7): per storage pool a header
  'name,id,size,hard,files,hard' and rows in bytes and files, 'unlimited' for no limit.
- beegfs quota list-usage --uids UID --raw --output ndjson (BeeGFS 8): one JSON object per
  row (name, id, type, pool, space 'used/limit', inode 'used/limit', '∞' for no limit);
  the table output (same columns) and human units ('1.50GiB') are read too.
- mmlsquota -Y -u USER DEVICE (GPFS / Storage Scale): colon-separated, a HEADER line names
  the fields; blocks in KiB, 0 means no limit, grace 'none' | 'expired' | '6 days'.
- quota -w -p -v -u USER (Linux quota tools, NFS through rquotad): blocks in KiB, '*' over
  a limit, grace in seconds since the epoch with -p (else '6days', '13:45', 'none').
"""

import json
from datetime import datetime
from urllib.parse import unquote

from django.utils import timezone

from exercises.quotas.usage import QuotaParseError, Usage, count, grace, limit, over
from portal.units import KiB

# --- Lustre -----------------------------------------------------------------------------


def parse_lfs_quota(output: str, mount: str = "", *, now: datetime | None = None) -> Usage:
    now = now or timezone.now()
    if "[" in output:
        raise QuotaParseError("lfs marked the figures inaccurate ('[…]'): a target is down")
    rows = _joined_rows(output, columns=9)
    wanted = mount.rstrip("/") or None
    row = next((r for r in rows if wanted is None or r[0].rstrip("/") == wanted), None)
    if row is None:
        raise QuotaParseError(f"no line for {mount or 'a filesystem'} in the lfs output")
    _, kbytes, bsoft, bhard, bgrace, files, fsoft, fhard, fgrace = row

    def when(text: str) -> datetime | None:
        return grace(text, now, no_grace=("-", ""), expired=("none", "expired"))

    return Usage(
        bytes_used=count(over(kbytes)[0], "kbytes", unit=KiB),
        bytes_soft=limit(over(bsoft)[0], "block quota", unit=KiB),
        bytes_hard=limit(over(bhard)[0], "block limit", unit=KiB),
        files_used=count(over(files)[0], "files"),
        files_soft=limit(over(fsoft)[0], "file quota"),
        files_hard=limit(over(fhard)[0], "file limit"),
        bytes_grace_ends=when(bgrace),
        files_grace_ends=when(fgrace),
    )


def _joined_rows(output: str, columns: int) -> list[list[str]]:
    """Rows of a filesystem table, with a row that the tool wrapped (the name alone on its
    line, the numbers on the next) joined back. Header and chatter lines are skipped."""
    rows: list[list[str]] = []
    pending: str | None = None
    for line in output.splitlines():
        tokens = line.split()
        if len(tokens) == 1 and not line[0].isspace():
            pending = tokens[0]  # a long name, alone on its line
            continue
        if pending and line[:1].isspace() and tokens:
            tokens = [pending, *tokens]
        pending = None
        if len(tokens) == columns and tokens[1].rstrip("*")[:1].isdigit():
            rows.append(tokens)
    return rows


# --- BeeGFS -------------------------------------------------------------------------------


def parse_beegfs_ctl_csv(output: str, user: str, uid: int | None = None) -> Usage:
    """The first storage pool's row for the user (normally the Default pool)."""
    header_seen = False
    for line in output.splitlines():
        cells = [c.strip() for c in line.split(",")]
        if cells[:2] == ["name", "id"]:
            if cells != ["name", "id", "size", "hard", "files", "hard"]:
                raise QuotaParseError(f"unexpected beegfs-ctl columns: {line.strip()!r}")
            header_seen = True
            continue
        if header_seen and len(cells) == 6 and _same_user(cells[0], cells[1], user, uid):
            name, _, size, size_hard, files, files_hard = cells
            return Usage(
                bytes_used=count(size, "size"),
                bytes_hard=_beegfs_limit(size_hard, "size limit"),
                files_used=count(files, "files"),
                files_hard=_beegfs_limit(files_hard, "files limit"),
            )
    if not header_seen:
        raise QuotaParseError("no 'name,id,size,hard,files,hard' header in the beegfs-ctl output")
    raise QuotaParseError(f"no row for {user} in the beegfs-ctl output")


def _beegfs_limit(text: str, what: str, units: bool = False) -> int | None:
    # BeeGFS spells "no limit" out ('unlimited', '∞', or int64's maximum), so a 0 here
    # is a real limit of nothing, unlike lfs, mmlsquota and quota.
    if text.strip().lower() in ("unlimited", "∞", str(2**63 - 1)):
        return None
    return count(text, what, units=units)


def parse_beegfs_list_usage(output: str, user: str, uid: int | None = None) -> Usage:
    for line in output.splitlines():
        line = line.strip()
        if not line or line.startswith(("INFO", "WARNING")):
            continue
        if line.startswith("{"):
            try:
                row = json.loads(line)
                cells = [str(row[k]) for k in ("name", "id", "type", "pool", "space", "inode")]
            except (ValueError, KeyError, TypeError):
                raise QuotaParseError(f"unreadable beegfs row: {line[:120]!r}") from None
        else:
            cells = line.split()
            if len(cells) != 6 or cells[0].lower() == "name":
                continue
        name, id_, kind, _, space, inode = cells
        if kind == "user" and _same_user(name, id_, user, uid):
            return Usage(
                bytes_used=_beegfs_used(space, "space"),
                bytes_hard=_beegfs_pair_limit(space, "space"),
                files_used=_beegfs_used(inode, "inodes"),
                files_hard=_beegfs_pair_limit(inode, "inodes"),
            )
    raise QuotaParseError(f"no user row for {user} in the beegfs output")


def _beegfs_pair(text: str, what: str) -> tuple[str, str]:
    used, slash, limit_text = text.partition("/")
    if not slash or "?" in (used, limit_text):
        raise QuotaParseError(f"BeeGFS does not know the {what} figures: {text!r}")
    return used, limit_text


def _beegfs_used(text: str, what: str) -> int:
    return count(_beegfs_pair(text, what)[0], what, units=True)


def _beegfs_pair_limit(text: str, what: str) -> int | None:
    return _beegfs_limit(_beegfs_pair(text, what)[1], f"{what} limit", units=True)


def _same_user(name: str, id_: str, user: str, uid: int | None) -> bool:
    return name == user or (uid is not None and id_ == str(uid))


# --- GPFS / Storage Scale --------------------------------------------------------------------


def parse_mmlsquota(
    output: str, user: str, device: str = "", *, now: datetime | None = None
) -> Usage:
    """The user's USR row for the device (and fileset, for 'device:fileset')."""
    now = now or timezone.now()
    filesystem, _, fileset = device.partition(":")
    fields: list[str] | None = None
    for line in output.splitlines():
        cells = line.strip().split(":")
        if len(cells) < 3 or cells[0] != "mmlsquota":
            continue
        if cells[2] == "HEADER":
            fields = cells
            continue
        if fields is None:
            raise QuotaParseError("mmlsquota -Y output without a HEADER line")
        row = dict(zip(fields, (unquote(c) for c in cells), strict=False))
        if (
            row.get("quotaType") == "USR"
            and _same_user(row.get("name", ""), row.get("id", ""), user, None)
            and (not filesystem or row.get("filesystemName") == filesystem)
            and (not fileset or row.get("filesetname") == fileset)
        ):
            return _mmlsquota_usage(row, now)
    if fields is None:
        raise QuotaParseError("no mmlsquota -Y HEADER line in the output")
    raise QuotaParseError(f"no USR row for {user} on {device or 'any device'} in mmlsquota output")


def _mmlsquota_usage(row: dict[str, str], now: datetime) -> Usage:
    try:
        enforced = row.get("quota", "on") != "off"

        def lim(key: str, unit: int = 1) -> int | None:
            return limit(row[key], key, unit=unit) if enforced else None

        def when(key: str) -> datetime | None:
            return grace(row[key], now, no_grace=("none", ""), expired=("expired",))

        return Usage(
            bytes_used=count(row["blockUsage"], "blockUsage", unit=KiB),
            bytes_soft=lim("blockQuota", KiB),
            bytes_hard=lim("blockLimit", KiB),
            files_used=count(row["filesUsage"], "filesUsage"),
            files_soft=lim("filesQuota"),
            files_hard=lim("filesLimit"),
            bytes_grace_ends=when("blockGrace") if enforced else None,
            files_grace_ends=when("filesGrace") if enforced else None,
        )
    except KeyError as e:
        raise QuotaParseError(f"mmlsquota row without the {e.args[0]} field") from None


# --- quota (Linux quota tools; NFS through rpc.rquotad) --------------------------------------


def parse_quota(output: str, filesystem: str = "", *, now: datetime | None = None) -> Usage:
    """The row of `filesystem` (as quota names it: a device, server:/export or mount
    point); without one, the only row there is."""
    now = now or timezone.now()
    if "):" in output and output.split("):", 1)[1].split("\n", 1)[0].strip() == "none":
        raise QuotaParseError("quota says no quota is set for this user")
    rows = [r for n in (8, 7, 6) for r in _joined_rows(output, columns=n + 1)]
    wanted = filesystem.rstrip("/")
    if wanted:
        rows = [r for r in rows if r[0].rstrip("/") == wanted]
    if len(rows) != 1:
        found = "no row" if not rows else f"{len(rows)} rows"
        raise QuotaParseError(f"{found} for {filesystem or 'a filesystem'} in the quota output")
    return _quota_usage(rows[0][1:], now)


def _quota_usage(cells: list[str], now: datetime) -> Usage:
    blocks, blocks_over = over(cells[0])
    # Without -p an empty grace column is left out: which one is there follows the '*'.
    if len(cells) == 8:
        bgrace, files, fsoft, fhard, fgrace = cells[3], cells[4], cells[5], cells[6], cells[7]
    elif len(cells) == 7 and blocks_over:
        bgrace, files, fsoft, fhard, fgrace = cells[3], cells[4], cells[5], cells[6], ""
    else:
        bgrace, (files, fsoft, fhard), fgrace = "", cells[3:6], cells[6] if len(cells) > 6 else ""

    def when(text: str) -> datetime | None:
        return grace(text, now, no_grace=("", "0"), expired=("none", "expired"))

    return Usage(
        bytes_used=count(blocks, "blocks", unit=KiB),
        bytes_soft=limit(cells[1], "block quota", unit=KiB),
        bytes_hard=limit(cells[2], "block limit", unit=KiB),
        files_used=count(over(files)[0], "files"),
        files_soft=limit(fsoft, "file quota"),
        files_hard=limit(fhard, "file limit"),
        bytes_grace_ends=when(bgrace),
        files_grace_ends=when(fgrace),
    )
