"""v0.0.38, Slurm 22.05 (Debian 12's, and the dev cluster's): the oldest version we
speak, and the first of the chain (no previous one).

Jobs: job_state a string, times plain integers, exit_code the raw wait status.
Ping: "ping": "UP", under meta "Slurm" (capitalised), which names no cluster.
Submission: sbatch-style options: the script beside `job`, environment an object,
time_limit in minutes, nodes [minimum, maximum].
"""

from typing import Any

from jobs.slurm.adapters.common import job_fields
from jobs.slurm.models import JobSpec

VERSION = "v0.0.38"
previous = None


def submit_payload(spec: JobSpec) -> dict[str, Any]:
    job = job_fields(spec)
    if spec.nodes:
        job["nodes"] = [spec.nodes, spec.nodes]  # [minimum, maximum]
    job["time_limit"] = spec.time_limit_minutes
    job["environment"] = dict(spec.environment)
    return {"script": spec.script, "job": job}
