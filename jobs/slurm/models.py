"""The client's own models: what the rest of the portal sees of Slurm, whatever
the API version behind it."""

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class JobState(StrEnum):
    """Slurm's base job states (the first flag from v0.0.40 on)."""

    PENDING = "PENDING"
    RUNNING = "RUNNING"
    SUSPENDED = "SUSPENDED"
    COMPLETING = "COMPLETING"
    COMPLETED = "COMPLETED"
    CANCELLED = "CANCELLED"
    FAILED = "FAILED"
    TIMEOUT = "TIMEOUT"
    NODE_FAIL = "NODE_FAIL"
    PREEMPTED = "PREEMPTED"
    BOOT_FAIL = "BOOT_FAIL"
    DEADLINE = "DEADLINE"
    OUT_OF_MEMORY = "OUT_OF_MEMORY"
    UNKNOWN = "UNKNOWN"

    @property
    def finished(self) -> bool:
        return self not in (self.PENDING, self.RUNNING, self.SUSPENDED, self.COMPLETING)


class SlurmJob(BaseModel):
    model_config = ConfigDict(frozen=True)

    job_id: int
    name: str = ""
    state: JobState
    reason: str = ""
    # Decoded from the wait status: the script's exit code, or the killing signal.
    return_code: int | None = None
    signal: int | None = None
    submit_time: datetime | None = None
    start_time: datetime | None = None
    end_time: datetime | None = None
    user_name: str = ""
    standard_output: str = ""
    working_directory: str = ""
    cluster: str = ""
    # The nodes it was given, as Slurm writes a hostlist ("c1", "node[1-2],gpu3"); ""
    # before it has any (jobs/slurm/hostlist.py reads it).
    nodes: str = ""


class JobList(list[SlurmJob]):
    """Slurm's job list, and the time of its last change on Slurm's own clock.

    `last_update` is what slurmctld says (v0.0.40+). Older APIs do not say; for them it
    is the latest event the jobs themselves show (a submission, a start, an end), which
    slurmctld's last change cannot precede. None for an empty list of such an API."""

    def __init__(self, jobs: list[SlurmJob], last_update: datetime | None):
        super().__init__(jobs)
        self.last_update = last_update


class JobSpec(BaseModel):
    """A batch job to submit. Every field is typed; the script is built by the
    portal from validated parameters, never taken from a user."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")
    script: str
    partition: str
    working_directory: str
    standard_output: str
    standard_error: str | None = None
    time_limit_minutes: int = Field(ge=1, le=24 * 60)
    tasks: int = Field(default=1, ge=1)
    cpus_per_task: int = Field(default=1, ge=1)
    # One node for a run on a directory only one node sees; None: as Slurm places them.
    nodes: int | None = Field(default=None, ge=1)
    # Tasks on each node, for ranks spread evenly (Slurm's default fills a node first:
    # eight tasks on two nodes of eight CPUs become seven and one).
    tasks_per_node: int | None = Field(default=None, ge=1)
    environment: dict[str, str] = Field(default_factory=dict)
    # A job of the same user this one starts after, however that one ends (Slurm's
    # afterany dependency): a user's runs go one at a time (jobs/submission.py).
    after: int | None = Field(default=None, ge=1)


class Ping(BaseModel):
    model_config = ConfigDict(frozen=True)

    api_version: str
    release: str
    hostname: str
    up: bool
    cluster: str = ""
    # Why the controller is not responding, where slurmrestd says (v0.0.45+).
    status: str = ""

    @property
    def token_refused(self) -> bool:
        """Slurm 26.05 answers a ping with a refused token as a controller that does
        not respond, its status saying why."""
        return not self.up and "authentication" in self.status.lower()
