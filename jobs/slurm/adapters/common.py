"""What every API version's answers share, read into the client's models. Job
records are read with one tolerant model: each field takes every shape a version
gives it (a string or a list of flags, a number or {set, infinite, number}, a wait
status or a decoded exit code), so a job reads the same whatever version sent it.
What changed in which version is said in that version's module."""

from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError

from jobs.slurm.errors import SlurmInvalidResponse
from jobs.slurm.models import JobList, JobSpec, JobState, Ping, SlurmJob


class _Loose(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _Number(_Loose):
    set: bool = False
    infinite: bool = False
    number: int = 0


class _Signal(_Loose):
    id: _Number = _Number()


class _ExitCode(_Loose):
    return_code: _Number = _Number()
    signal: _Signal = _Signal()


# Slurm answers null for a name it cannot resolve (say, a deleted user).
Text = Annotated[str, BeforeValidator(lambda value: "" if value is None else value)]


def _unwrap_wait_status(value: Any) -> Any:
    """v0.0.39 gives the raw wait status as {set, infinite, number}."""
    if isinstance(value, dict) and "number" in value and "return_code" not in value:
        return value["number"] if value.get("set") else None
    return value


_ExitField = Annotated[int | _ExitCode | None, BeforeValidator(_unwrap_wait_status)]


class _Job(_Loose):
    job_id: int
    name: Text = ""
    job_state: str | list[str]
    state_reason: Text = ""
    exit_code: _ExitField = None
    submit_time: int | _Number | None = None
    start_time: int | _Number | None = None
    end_time: int | _Number | None = None
    user_name: Text = ""
    standard_output: Text = ""
    stdout_expanded: Text = ""
    current_working_directory: Text = ""
    cluster: Text = ""
    # A hostlist string in every version (v0.0.38 to v0.0.44): "" while pending.
    nodes: Text = ""


def _time(value: int | _Number | None) -> datetime | None:
    if isinstance(value, _Number):
        value = value.number if value.set and not value.infinite else None
    return datetime.fromtimestamp(value, UTC) if value else None


def _state(value: str | list[str]) -> JobState:
    name = value[0] if isinstance(value, list) and value else value
    try:
        return JobState(name)
    except ValueError:
        return JobState.UNKNOWN


def _exit(value: int | _ExitCode | None) -> tuple[int | None, int | None]:
    """(return code, signal). Up to v0.0.39 the value is the raw wait status."""
    if value is None:
        return None, None
    if isinstance(value, int):
        if value & 0x7F:
            return None, value & 0x7F
        return value >> 8, None
    signal = value.signal.id.number if value.signal.id.set else None
    code = value.return_code.number if value.return_code.set else None
    return code, signal or None


def parse_job(raw: dict[str, Any]) -> SlurmJob:
    try:
        job = _Job.model_validate(raw)
    except ValidationError as e:
        raise SlurmInvalidResponse(f"unreadable job record: {e.error_count()} invalid field(s)")
    code, signal = _exit(job.exit_code)
    return SlurmJob(
        job_id=job.job_id,
        name=job.name,
        state=_state(job.job_state),
        reason=job.state_reason if job.state_reason != "None" else "",
        return_code=code,
        signal=signal,
        submit_time=_time(job.submit_time),
        start_time=_time(job.start_time),
        end_time=_time(job.end_time),
        user_name=job.user_name,
        standard_output=job.stdout_expanded or job.standard_output,
        working_directory=job.current_working_directory,
        cluster=job.cluster,
        nodes=job.nodes,
    )


class _JobList(_Loose):
    last_update: int | _Number | None = None


def parse_jobs(body: dict[str, Any]) -> JobList:
    jobs = [parse_job(raw) for raw in body.get("jobs") or []]
    try:
        said = _time(_JobList.model_validate(body).last_update)
    except ValidationError:
        raise SlurmInvalidResponse("the job list has an unreadable last_update")
    return JobList(jobs, said or _latest_event(jobs))


def _latest_event(jobs: list[SlurmJob]) -> datetime | None:
    """The latest moment the jobs show as past: every submission, the start of a job
    that started, the end of one that ended. (A pending job's start and a running
    job's end are Slurm's forecasts, later than its clock.)"""
    events = []
    for job in jobs:
        events.append(job.submit_time)
        if job.state != JobState.PENDING:
            events.append(job.start_time)
        if job.state.finished or job.state == JobState.COMPLETING:
            events.append(job.end_time)
    return max((moment for moment in events if moment), default=None)


def parse_ping(version: str, body: dict[str, Any]) -> Ping:
    meta = body.get("meta") or {}
    slurm = meta.get("slurm") or meta.get("Slurm") or {}
    pings = body.get("pings") or [{}]
    first = pings[0] if isinstance(pings[0], dict) else {}
    # v0.0.38 says "ping": "UP", later versions "pinged": "UP", v0.0.42 on "responding".
    up = first.get("responding", (first.get("pinged") or first.get("ping")) == "UP")
    return Ping(
        api_version=version,
        release=str(slurm.get("release", "")),
        hostname=str(first.get("hostname", "")),
        up=bool(up),
        cluster=str(slurm.get("cluster", "")),
        status=str(first.get("status", "")),
    )


def job_fields(spec: JobSpec) -> dict[str, Any]:
    """The fields of a submission's `job` that every version takes alike."""
    return {
        "name": spec.name,
        "partition": spec.partition,
        "tasks": spec.tasks,
        "cpus_per_task": spec.cpus_per_task,
        "current_working_directory": spec.working_directory,
        "standard_output": spec.standard_output,
        "standard_error": spec.standard_error or spec.standard_output,
        # A run's job is never queued again by Slurm (a site's default JobRequeue=1
        # would rerun it after a node failure): the portal says what happened, and
        # starting it again is the trainee's choice.
        "requeue": False,
        **({"tasks_per_node": spec.tasks_per_node} if spec.tasks_per_node else {}),
        **({"dependency": f"afterany:{spec.after}"} if spec.after else {}),
    }
