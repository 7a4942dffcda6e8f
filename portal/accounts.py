"""Which Unix accounts the portal may act as when it runs a user's job: a person's
own account of the system (as `getent passwd` resolves it, through NSS: LDAP and
SSSD included), never a system account. The portal holds the cluster's JWT key and
could otherwise sign a token for any name, and a token for Slurm's own user
(SlurmUser) is a token for the whole cluster.

System accounts are refused whatever their UID: root (UID 0 under any name), Slurm's
own user (SlurmUser in slurm.conf, or SLURM_USER), the portal's service user,
`nobody` (UID 65534), every UID outside [CLUSTER_UID_MIN, CLUSTER_UID_MAX] (Debian's
login.defs gives people 1000-60000; `slurm` is 64030 on Debian), and the portal's own
identities: the UID it runs as (which owns its secrets, the JWT key among them), the
Darshan reader's sandbox user, and PORTAL_UIDS (the image's user, 65532, where a
container runs as another). A site whose directory hands out such a UID to a person
would otherwise give that person the portal's files.

Checked when an account is linked to a login (the model, so the admin too) and
again for every request to slurmrestd made as a user (jobs/slurm/client.py)."""

import os
import pwd
import re
from contextlib import suppress
from functools import cache
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ValidationError

NOBODY_UID = 65534
# "SlurmUser=slurm" in slurm.conf (keys are case-insensitive, comments start with #).
SLURM_USER_LINE = re.compile(r"^[ \t]*SlurmUser[ \t]*=[ \t]*([A-Za-z0-9_.-]{1,32})", re.I | re.M)


def passwd_entry(username: str) -> pwd.struct_passwd | None:
    """The account as this host knows it (`getent passwd`, through NSS: LDAP and SSSD
    included), or None when it knows no such user. The portal's only getpwnam."""
    try:
        return pwd.getpwnam(username)
    except KeyError:
        return None


def uid_of(username: str) -> int | None:
    """The account's UID, or None when this host knows no such user."""
    entry = passwd_entry(username)
    return entry.pw_uid if entry else None


def job_account_problem(username: str) -> str | None:
    """Why jobs may not run as `username`, or None."""
    if username == "root":
        return "Jobs never run as root."
    uid = uid_of(username)
    if uid is None:
        return f"{username} is not an account of this system (getent passwd knows no such user)."
    if uid == 0:
        return f"Jobs never run as root ({username} has UID 0)."
    if username in system_account_names() or uid == NOBODY_UID:
        return (
            f"{username} is a system account (Slurm's own, the portal's or nobody): jobs run "
            "only as people's own accounts."
        )
    if uid in portal_uids():
        return (
            f"{username} (UID {uid}) is one of the portal's own identities (the user it runs "
            "as, or its log reader's sandbox): jobs run only as people's own accounts."
        )
    low, high = settings.CLUSTER_UID_MIN, settings.CLUSTER_UID_MAX
    if not low <= uid <= high:
        return (
            f"{username} is a system account (UID {uid}, outside {low}-{high}): jobs run "
            "only as people's own accounts."
        )
    return None


def portal_uids() -> set[int]:
    """The UIDs the portal itself is: the one this process runs as (real and
    effective), the sandbox its log reader drops to, and PORTAL_UIDS."""
    uids = {os.getuid(), os.geteuid(), *settings.PORTAL_UIDS}
    # No sandbox here: no log is read, and there is no UID to keep out.
    with suppress(SandboxUnknown):
        uids.add(sandbox_ids()[0])
    return uids


class SandboxUnknown(Exception):
    """DARSHAN_SANDBOX_USER names no account this host knows, or root."""


def sandbox_ids() -> tuple[int, int]:
    """DARSHAN_SANDBOX_USER's UID and GID: a name the system knows, or "UID:GID"."""
    name = settings.DARSHAN_SANDBOX_USER
    uid_text, colon, gid_text = name.partition(":")
    if colon and uid_text.isdigit() and gid_text.isdigit():
        ids = int(uid_text), int(gid_text)
    else:
        entry = passwd_entry(name)
        if entry is None:
            raise SandboxUnknown(f"there is no sandbox user {name!r} on this host")
        ids = entry.pw_uid, entry.pw_gid
    if 0 in ids:
        raise SandboxUnknown("the sandbox user must not be root")
    return ids


def system_account_names() -> set[str]:
    return {"root", "nobody", slurm_user(), settings.SLURM_SERVICE_USER}


def slurm_user() -> str:
    """Slurm's own user: SLURM_USER if the site set it, else slurm.conf's SlurmUser,
    else "slurm" (Debian's, and Slurm's own default is root, refused anyway)."""
    return settings.SLURM_USER or _slurm_user_in(settings.SLURM_CONF)


@cache
def _slurm_user_in(path: str) -> str:
    try:
        found = SLURM_USER_LINE.search(Path(path).read_text(errors="replace")[:1_000_000])
    except OSError:
        found = None
    return found[1] if found else "slurm"


def validate_job_account(username: str) -> None:
    problem = job_account_problem(username)
    if problem:
        raise ValidationError(problem)
