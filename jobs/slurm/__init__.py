"""Our slurmrestd client: the only code that talks HTTP to Slurm.

- `client.SlurmClient`: one private request path, version discovery, the calls.
- `errors`: what can go wrong, and whether retrying can help.
- `auth`: the tokens (per-user JWTs signed by the portal, or a static service token).
- `models`: one internal model of a job, whatever the API version.
- `adapters/`: one module per API version (what changed in it), discovery's order,
  and in `adapters/common.py` what every version's answers share.
"""

from jobs.slurm.client import SlurmClient, get_client
from jobs.slurm.errors import (
    SlurmAuthError,
    SlurmConnectionError,
    SlurmError,
    SlurmInvalidResponse,
    SlurmNotFound,
    SlurmRejected,
    SlurmServerError,
)
from jobs.slurm.models import JobSpec, SlurmJob

__all__ = [
    "JobSpec",
    "SlurmAuthError",
    "SlurmClient",
    "SlurmConnectionError",
    "SlurmError",
    "SlurmInvalidResponse",
    "SlurmJob",
    "SlurmNotFound",
    "SlurmRejected",
    "SlurmServerError",
    "get_client",
]
