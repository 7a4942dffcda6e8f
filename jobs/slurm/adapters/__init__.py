"""Each slurmrestd API version's shape, turned into the client's models, one module
per version, as Slurm-web keeps them.

Each version's module (`v0_0_38.py` ... `v0_0_45.py`) says in its docstring what
changed from the one before, names that one (`previous`), and takes from it what
did not change. What every version shares is read in `common.py`. Discovery tries
the versions newest first, along that chain from `newest` below: a new API version
is its module (with `previous` the one it follows) and this one line naming it.
"""

from types import ModuleType
from typing import Any

from jobs.slurm.adapters import v0_0_45 as newest  # each names the one before it
from jobs.slurm.adapters.common import parse_job, parse_jobs, parse_ping
from jobs.slurm.models import JobSpec


def _newest_first(module: ModuleType | None) -> tuple[ModuleType, ...]:
    chain = []
    while module is not None:
        chain.append(module)
        module = module.previous
    return tuple(chain)


ADAPTERS = _newest_first(newest)
# Newest first: discovery takes the first one slurmrestd serves.
API_VERSIONS = tuple(adapter.VERSION for adapter in ADAPTERS)
_BY_VERSION = dict(zip(API_VERSIONS, ADAPTERS, strict=True))


def adapter(version: str) -> ModuleType:
    """The module of an API version the client speaks (one of API_VERSIONS)."""
    try:
        return _BY_VERSION[version]
    except KeyError:
        raise ValueError(f"no adapter for slurmrestd API {version}") from None


def submit_payload(version: str, spec: JobSpec) -> dict[str, Any]:
    return adapter(version).submit_payload(spec)


__all__ = [
    "ADAPTERS",
    "API_VERSIONS",
    "adapter",
    "parse_job",
    "parse_jobs",
    "parse_ping",
    "submit_payload",
]
