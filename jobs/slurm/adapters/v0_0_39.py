"""v0.0.39, Slurm 23.02: the data_parser plugin, and its shapes.

Jobs: exit_code is still the raw wait status, now wrapped in {set, infinite,
number} (common.py unwraps it).
Ping: "pinged": "UP", under meta "slurm".
Submission: the script inside `job`, environment a list of K=V, time_limit a {set,
number} struct, nodes a count range as sbatch --nodes takes it.
"""

from typing import Any

from jobs.slurm.adapters import v0_0_38
from jobs.slurm.adapters.common import job_fields
from jobs.slurm.models import JobSpec

VERSION = "v0.0.39"
previous = v0_0_38


def submit_payload(spec: JobSpec) -> dict[str, Any]:
    job = job_fields(spec)
    if spec.nodes:
        job["nodes"] = str(spec.nodes)  # a count range, as sbatch --nodes takes it
    job["time_limit"] = {"set": True, "number": spec.time_limit_minutes}
    job["environment"] = [f"{k}={v}" for k, v in spec.environment.items()]
    job["script"] = spec.script
    return {"job": job}
