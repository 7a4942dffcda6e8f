"""The jobs' check on /healthz: can the portal reach slurmrestd and sign in, and does
slurmrestd itself say it is ready where it can (its /readyz, Slurm 26.05 and later)?
A failure says what a site looks at next (README: Deploying at a site)."""

from jobs.slurm import SlurmAuthError, SlurmConnectionError, SlurmError, get_client
from portal.health import Check

READINESS = {True: "ready", False: "NOT READY", None: "(no /readyz before Slurm 26.05)"}
NEXT_STEP = {
    SlurmConnectionError: (
        "Look at SLURMRESTD_URL, whether slurmrestd runs there, and whether this host may reach it."
    ),
    SlurmAuthError: (
        "Look at SLURM_JWT_KEY_FILE: the portal signs with it, and slurmctld must read the "
        "same key (slurm.conf: AuthAltTypes=auth/jwt, AuthAltParameters=jwt_key=PATH), "
        "slurmrestd must run with -a rest_auth/jwt, and the portal's user must read the file."
    ),
}


def check_slurm() -> Check:
    client = get_client()
    try:
        ping = client.ping()
        cluster = client.cluster_name()
        ready = client.ready()
    except SlurmError as e:
        step = next((s for kind, s in NEXT_STEP.items() if isinstance(e, kind)), "")
        return Check("Slurm (slurmrestd)", False, f"{str(e).rstrip('.')}. {step}".strip())
    facts = {
        "API version": ping.api_version,
        "Slurm release": ping.release,
        "controller": f"{ping.hostname} ({'up' if ping.up else 'DOWN'})",
        "cluster": cluster or "(not reported)",
        "slurmrestd /readyz": READINESS[ready],
    }
    ok = ping.up and ready is not False
    return Check("Slurm (slurmrestd)", ok, "reachable and authenticated", facts)
