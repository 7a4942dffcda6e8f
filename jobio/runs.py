"""A lab run's own I/O profile. Where the site names a darshan-runtime
(RUN_DARSHAN_RUNTIME), the job script preloads it into the benchmark, and after the
result sends the logs Darshan wrote, one per process, one after the other with their
sizes in a header, or says why there are none. They are kept with the run, read in the
sandbox on the darshan queue (jobio/tasks.py: read_run_logs), and the run page shows
the profile with Check my job's charts, or one line saying why there is none."""

import re
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from exercises.advisor.profile import IOProfile
from jobio.models import RunLog
from jobio.sandbox import LogUnreadable, parse_run_logs
from jobs.models import BenchmarkRun, RunStatus
from jobs.results import ResultRefused, check_token
from jobs.scripts import DARSHAN_LOGS_MAX
from portal.units import MiB

# Why a job sent no logs: the script says which (X-Darshan-Missing), the page says this.
MISSING = {
    "none": (
        "Darshan wrote no log: the benchmark did not end by itself (it was stopped, or "
        "ran out of time), or the runtime could not be loaded on the node."
    ),
    "big": (
        "The run's Darshan logs were larger than the {max_mib:g} MiB kept per run, so they "
        "were not sent."
    ),
    "many": "The run left more Darshan logs than it has processes, so they were not sent.",
}
IN_MEMORY = (
    "Runs on a target in memory are not recorded: Darshan's bookkeeping of each call would "
    "slow a million 4 KiB writes a second by about a quarter, and the figure would no "
    "longer be the target's. Run the exercise on another target to see its I/O profile: "
    "the requests are the same."
)
# At most as many logs as the job script sends (a process each, and their parent).
SIZES = re.compile(rf"[0-9]{{1,9}}(,[0-9]{{1,9}}){{0,{DARSHAN_LOGS_MAX - 1}}}")
# A job sends its logs right after its result; beyond this, none is coming.
LOGS_GRACE_SECONDS = 120
# Logs whose read has not begun this long after they came lost their task.
LOGS_QUEUE_WAIT_SECONDS = 600


def receive(
    run: BenchmarkRun, token: str, body: bytes, sizes: str | None, missing: str | None
) -> RunLog:
    """Keeps what the job sent, once (409 for a second post); the caller has the logs
    read (jobio/tasks.py). ResultRefused (403, 400, 409) says why not."""
    check_token(run, token)
    if missing is not None:
        if missing not in MISSING:
            raise ResultRefused(400, f"X-Darshan-Missing must be one of {', '.join(MISSING)}")
        row = RunLog(run=run, missing=MISSING[missing].format(max_mib=max_mib()))
    else:
        row = RunLog(run=run, logs=body, sizes=parse_sizes(sizes or "", len(body)))
    try:
        with transaction.atomic():
            row.save(force_insert=True)
    except IntegrityError:
        raise ResultRefused(409, "this run's Darshan logs were received already") from None
    return row


def parse_sizes(header: str, length: int) -> list[int]:
    """The logs' sizes, which must add up to the body: else 400."""
    if not SIZES.fullmatch(header):
        raise ResultRefused(400, "X-Darshan-Sizes must be the logs' sizes, comma-separated")
    sizes = [int(n) for n in header.split(",")]
    if sum(sizes) != length or 0 in sizes:
        raise ResultRefused(400, "X-Darshan-Sizes does not add up to the body")
    return sizes


def max_mib() -> float:
    return settings.RUN_DARSHAN_MAX_BYTES / MiB


def read(run_id: int) -> None:
    """Reads the run's logs into its profile, or keeps why they cannot be read.
    Idempotent: logs already begun, read or given up on are left as they are."""
    begun = RunLog.objects.filter(
        pk=run_id, read_started_at__isnull=True, profile__isnull=True, problem="", missing=""
    ).update(read_started_at=timezone.now())
    row = RunLog.objects.filter(pk=run_id).first() if begun else None
    if row is None:
        return
    try:
        profile = parse_run_logs(
            bytes(row.logs),
            list(row.sizes),
            seconds=settings.DARSHAN_PARSE_SECONDS,
            memory_bytes=settings.DARSHAN_PARSE_MEMORY_MB * MiB,
        )
    except LogUnreadable as e:
        RunLog.objects.filter(pk=run_id).update(problem=str(e)[:500])
        return
    processes = row.run.workload_params.processes
    if profile.nprocs < processes:
        # Ranks on another node leave their logs there: a part is never shown as the whole.
        RunLog.objects.filter(pk=run_id).update(
            problem=f"Logs came from {profile.nprocs} of the run's {processes} processes, so "
            "its profile is not shown: a part would pass for the whole. (A process on "
            "another node than the job's first writes its log there.)"
        )
        return
    RunLog.objects.filter(pk=run_id).update(profile=profile.to_json())


# --- what the run page says -----------------------------------------------------


@dataclass(frozen=True)
class RunProfile:
    """The run's profile, or why the page has none (`reason`); `following` while it
    may still come (the page polls)."""

    profile: IOProfile | None = None
    reason: str = ""
    following: bool = False
    visible: bool = True  # a run of a site that records none has no card for it


def recorded(run: BenchmarkRun) -> bool:
    """Whether the run's job preloaded Darshan: its script, which is what ran, says so
    (the setting may have changed since)."""
    return "LD_PRELOAD=" in (run.job_script or "")


def of_run(run: BenchmarkRun, read_seconds: int) -> RunProfile:
    """What the run page shows of the run's I/O profile. `read_seconds`: the longest a
    read may take (a read begun longer ago lost its reader)."""
    row = RunLog.objects.filter(run=run).defer("logs").first()  # polled: not its bytes
    now = timezone.now()
    if row is not None:
        if row.profile is not None:
            return RunProfile(IOProfile.from_json(row.profile))
        if row.missing:
            return RunProfile(reason=row.missing)
        if row.problem:
            return RunProfile(reason=f"The run's Darshan logs could not be read. {row.problem}")
        started = row.read_started_at
        if started and now - started > timedelta(seconds=read_seconds):
            return RunProfile(reason="Reading the run's Darshan logs did not finish.")
        if not started and now - row.received_at > timedelta(seconds=LOGS_QUEUE_WAIT_SECONDS):
            return RunProfile(
                reason="The run's Darshan logs were never read: the portal's task queue did "
                "not take them. Ask the administrators to look at the darshan worker."
            )
        return RunProfile(reason="Reading the run's Darshan logs…", following=True)
    if not recorded(run):
        if run.in_memory and settings.RUN_DARSHAN_RUNTIME:
            return RunProfile(reason=IN_MEMORY)
        return RunProfile(reason="This run was not recorded with Darshan.", visible=False)
    if run.is_unfinished:
        return RunProfile(reason="The profile comes once the run has ended.", following=True)
    if run.status != RunStatus.COMPLETED:
        return RunProfile(
            reason=f"The run ended {run.get_status_display().lower()}: no Darshan profile was "
            "sent (its figure, if any, is above)."
        )
    since = run.result_received_at or run.ended_at or run.updated_at
    if now - since < timedelta(seconds=LOGS_GRACE_SECONDS):
        return RunProfile(reason="The profile follows the result in a few seconds…", following=True)
    return RunProfile(
        reason="No Darshan log arrived from the job after its result (it may have been "
        "stopped before sending them, or could not reach the portal)."
    )
