"""Which Unix accounts the portal may act as when it runs a user's job: a real
account of the system (as `getent passwd` resolves it, through NSS: LDAP and SSSD
included), not root, with a UID at or above CLUSTER_UID_MIN. The portal holds the
cluster's JWT key and could otherwise sign a token for any name, root's included.

Checked when an account is linked to a login (the model, so the admin too) and
again for every request to slurmrestd made as a user (jobs/slurm/client.py)."""

import pwd

from django.conf import settings
from django.core.exceptions import ValidationError


def job_account_problem(username: str) -> str | None:
    """Why jobs may not run as `username`, or None."""
    if username == "root":
        return "Jobs never run as root."
    try:
        uid = pwd.getpwnam(username).pw_uid
    except KeyError:
        return f"{username} is not an account of this system (getent passwd knows no such user)."
    if uid < settings.CLUSTER_UID_MIN:
        return (
            f"{username} is a system account (UID {uid}, below {settings.CLUSTER_UID_MIN}): "
            "jobs run only as people's own accounts."
        )
    return None


def validate_job_account(username: str) -> None:
    problem = job_account_problem(username)
    if problem:
        raise ValidationError(problem)
