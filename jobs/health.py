"""The jobs' check on /healthz: can the portal reach slurmrestd and sign in?"""

from jobs.slurm import SlurmError, get_client
from portal.health import Check


def check_slurm() -> Check:
    client = get_client()
    try:
        ping = client.ping()
        cluster = client.cluster_name()
    except SlurmError as e:
        return Check("Slurm (slurmrestd)", False, str(e))
    facts = {
        "API version": ping.api_version,
        "Slurm release": ping.release,
        "controller": f"{ping.hostname} ({'up' if ping.up else 'DOWN'})",
        "cluster": cluster or "(not reported)",
    }
    return Check("Slurm (slurmrestd)", ping.up, "reachable and authenticated", facts)
