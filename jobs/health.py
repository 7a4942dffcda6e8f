"""The jobs' check on /healthz: can the portal reach slurmrestd and sign in, and does
slurmrestd itself say it is ready where it can (its /readyz, Slurm 26.05 and later)?"""

from jobs.slurm import SlurmError, get_client
from portal.health import Check

READINESS = {True: "ready", False: "NOT READY", None: "(no /readyz before Slurm 26.05)"}


def check_slurm() -> Check:
    client = get_client()
    try:
        ping = client.ping()
        cluster = client.cluster_name()
        ready = client.ready()
    except SlurmError as e:
        return Check("Slurm (slurmrestd)", False, str(e))
    facts = {
        "API version": ping.api_version,
        "Slurm release": ping.release,
        "controller": f"{ping.hostname} ({'up' if ping.up else 'DOWN'})",
        "cluster": cluster or "(not reported)",
        "slurmrestd /readyz": READINESS[ready],
    }
    ok = ping.up and ready is not False
    return Check("Slurm (slurmrestd)", ok, "reachable and authenticated", facts)
