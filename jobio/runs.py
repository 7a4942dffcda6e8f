"""A lab run's own I/O (JobIO). Where the site names a darshan-runtime
(RUN_DARSHAN_RUNTIME), the job script preloads it into the benchmark, and after the
result sends the logs Darshan wrote, one per process, one after the other with their
sizes in a header, or says why there are none. They are kept with the run, read in the
sandbox on the darshan queue (jobio/tasks.py: read_run_logs), and the run page shows
its I/O with Check my job's charts, or one line saying why there is none.

The logs are the job owner's bytes, and reach the reader as an upload does, under the
same per-user limits (jobio/checks.py): taken only from a run whose job recorded them,
once, within RESULT_RETRY_SECONDS of the run's end; counted with their owner's checks
in line and bytes waiting; at most RUN_DARSHAN_PER_HOUR runs' logs an hour. A run's
logs beyond their owner's DARSHAN_CHECKS_GOING places with the reader wait for one (a
trainee's runs end together), as runs wait for a slot: `send_next`. Their job is told a
refusal in one line (403, final for it); the run page says it in a trainee's words."""

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import NamedTuple

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import dateformat, timezone

from exercises.advisor.job_io import JobIO
from jobio import checks
from jobio.models import RunLog
from jobio.sandbox import LogUnreadable, parse_run_logs
from jobs.models import BenchmarkRun, RunStatus
from jobs.results import ResultRefused, check_token
from jobs.retention import Kept, OctetLength
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
    "longer be the target's. Run the exercise on another target to see its I/O summary: "
    "the requests are the same."
)
# At most as many logs as the job script sends (a process each, and their parent).
SIZES = re.compile(rf"[0-9]{{1,9}}(,[0-9]{{1,9}}){{0,{DARSHAN_LOGS_MAX - 1}}}")
# Why the portal did not take a run's logs: the job is told the first in one line,
# the run page says the second (kept in RunLog.missing).
LATE = (
    "a run's Darshan logs are taken for {seconds} s after it ended: these came later",
    "The run's Darshan logs came more than {minutes:g} minutes after the run ended, when the "
    "portal no longer takes them (a job sends them within seconds of its figure), so they "
    "were not kept. Its figure is not affected.",
)
OVER_BYTES = (
    "its owner's Darshan logs waiting to be read would be more than {mib:,.0f} MiB",
    "The run's Darshan logs were not kept: with them, your Darshan logs waiting to be read "
    "(your lab runs' and your checks') would have been more than {mib:,.0f} MiB, as much as "
    "one person may have waiting. Its figure is not affected: run the exercise again once "
    "the others are read to see its I/O summary.",
)
OVER_HOUR = (
    "its owner's runs sent Darshan logs {limit} times this hour, as many as are taken",
    "The run's Darshan logs were not kept: the portal had already taken the logs of {limit} "
    "of your runs in that hour, as many as it reads for one person in an hour. Its figure is "
    "not affected: run the exercise again in the next hour to see its I/O summary.",
)
# A job sends its logs right after its result; beyond this, none is coming.
LOGS_GRACE_SECONDS = 120
# Logs handed to the reader whose read has not begun this long after lost their task.
LOGS_QUEUE_WAIT_SECONDS = checks.RUN_LOGS_QUEUE_WAIT_SECONDS
# Logs still unread a day after they came never will be: retention may drop them.
LOGS_GIVEN_UP_SECONDS = 24 * 3600


class Refusal(NamedTuple):
    job: str  # the line the job gets
    page: str  # what the run page says


def receive(
    run: BenchmarkRun, token: str, body: bytes, sizes: str | None, missing: str | None
) -> RunLog:
    """Keeps what the job sent, once (409 for a second post), within the rules above;
    logs handed to the reader at once have `sent_at`, and the caller has them read
    (jobio/tasks.py). ResultRefused (403, 400, 409) says why not; a refusal of logs
    that came in time for a recorded run is kept, for the run page to say."""
    check_token(run, token)
    if not recorded(run):
        raise ResultRefused(
            403, "this run's job did not record it with Darshan: it has no logs to send"
        )
    if missing is not None:
        if missing not in MISSING:
            raise ResultRefused(400, f"X-Darshan-Missing must be one of {', '.join(MISSING)}")
        row = RunLog(run=run, missing=MISSING[missing].format(max_mib=max_mib()))
    else:
        row = RunLog(run=run, logs=body, sizes=parse_sizes(sizes or "", len(body)))
    now = timezone.now()
    row.received_at = now
    with transaction.atomic():
        checks.hold(run.user_id)
        if RunLog.objects.filter(run=run).exists():
            raise ResultRefused(409, "this run's Darshan logs were received already")
        line = checks.held(run.user_id, now)
        refused = _refusal(run, len(body) if row.sizes else None, line, now)
        if refused:
            row = RunLog.objects.create(run=run, received_at=now, missing=refused.page)
        else:
            if row.sizes and line.sent < settings.DARSHAN_CHECKS_GOING:
                row.sent_at = now
            row.save(force_insert=True)
    if refused:
        raise ResultRefused(403, f"{refused.job}: not kept")
    return row


def _refusal(
    run: BenchmarkRun, size: int | None, line: checks.Held, now: datetime
) -> Refusal | None:
    """Why these logs (`size` bytes; None: the job said why it has none) are not taken,
    if they are not, its owner having `line` in line. Called holding the owner's row."""
    if run.result_received_at is None:
        # Nothing kept: only a job that delivered its result sends logs, right after it.
        raise ResultRefused(
            403, "this run's result has not arrived: a job sends its Darshan logs after it"
        )
    ended = min(t for t in (run.result_received_at, run.ended_at) if t is not None)
    window = settings.RESULT_RETRY_SECONDS
    if now > ended + timedelta(seconds=window):
        job, page = LATE
        return Refusal(job.format(seconds=window), page.format(minutes=window / 60))
    if size is None:
        return None
    if line.bytes + size > settings.DARSHAN_USER_MAX_BYTES:
        job, page = OVER_BYTES
        mib = settings.DARSHAN_USER_MAX_BYTES / MiB
        return Refusal(job.format(mib=mib), page.format(mib=mib))
    if not checks.count_in_hour(run.user_id, "run-logs", settings.RUN_DARSHAN_PER_HOUR):
        job, page = OVER_HOUR
        limit = settings.RUN_DARSHAN_PER_HOUR
        return Refusal(job.format(limit=limit), page.format(limit=limit))
    return None


def send_next(user_id: int) -> list[int]:
    """Hands the user's runs' logs that wait for a place to the reader, oldest first,
    while fewer than DARSHAN_CHECKS_GOING of theirs (checks included) are with it.
    Returns the runs whose logs the caller is to have read (jobio/tasks.py)."""
    now = timezone.now()
    with transaction.atomic():
        checks.hold(user_id)
        room = settings.DARSHAN_CHECKS_GOING - checks.held(user_id, now).sent
        if room <= 0:
            return []
        waiting = checks.runs_in_line(user_id, now).filter(sent_at__isnull=True)
        run_ids = list(waiting.order_by("received_at").values_list("pk", flat=True)[:room])
        RunLog.objects.filter(pk__in=run_ids).update(sent_at=now)
    return run_ids


def users_waiting(limit: int = 100) -> list[int]:
    """Users whose runs' logs wait for a place (a sweep hands them on: jobio/tasks.py)."""
    waiting = RunLog.objects.unread().filter(sent_at__isnull=True)
    return list(waiting.values_list("run__user_id", flat=True).distinct().order_by()[:limit])


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
    """Reads the run's logs into its I/O, or keeps why they cannot be read.
    Idempotent: logs already begun, read or given up on are left as they are."""
    begun = (
        RunLog.objects.unread()
        .filter(pk=run_id, read_started_at__isnull=True)
        .update(read_started_at=timezone.now())
    )
    # The run comes with its logs: a run deleted while they are parsed (its owner's
    # account removed) leaves the updates below nothing to change, not a traceback.
    row = RunLog.objects.select_related("run").filter(pk=run_id).first() if begun else None
    if row is None:
        return
    try:
        io = parse_run_logs(
            bytes(row.logs),
            list(row.sizes),
            seconds=settings.DARSHAN_PARSE_SECONDS,
            memory_bytes=settings.DARSHAN_PARSE_MEMORY_MB * MiB,
        )
    except LogUnreadable as e:
        RunLog.objects.filter(pk=run_id).update(problem=str(e)[:500])
        return
    processes = row.run.workload_params.processes
    # One log a process Darshan watched, whether it read or wrote (with collective
    # buffering only the aggregators write: the other ranks' logs hold their opens).
    # Ranks on another node leave theirs there: a part is never shown as the whole.
    logs = len(row.sizes)
    if logs < processes:
        RunLog.objects.filter(pk=run_id).update(
            problem=f"Logs came from {logs} of the run's {processes} processes, so "
            "its I/O summary is not shown: a part would pass for the whole. (A process on "
            "another node than the job's first writes its log there.)"
        )
        return
    RunLog.objects.filter(pk=run_id).update(io=io.to_json())


# --- what the run page says -----------------------------------------------------


@dataclass(frozen=True)
class RunIO:
    """The run's I/O, or why the page has none (`reason`); `following` while it
    may still come (the page polls)."""

    io: JobIO | None = None
    reason: str = ""
    following: bool = False
    visible: bool = True  # a run of a site that records none has no card for it


def recorded(run: BenchmarkRun) -> bool:
    """Whether the run's job preloaded Darshan: its script, which is what ran, says so
    (the setting may have changed since)."""
    return "LD_PRELOAD=" in (run.job_script or "")


def of_run(run: BenchmarkRun, read_seconds: int) -> RunIO:
    """What the run page shows of the run's I/O. `read_seconds`: the longest a
    read may take (a read begun longer ago lost its reader)."""
    row = RunLog.objects.filter(run=run).defer("logs").first()  # polled: not its bytes
    now = timezone.now()
    if row is not None:
        if row.io is not None:
            return RunIO(JobIO.from_json(row.io))
        if row.missing:
            return RunIO(reason=row.missing)
        if row.problem:
            return RunIO(reason=f"The run's Darshan logs could not be read. {row.problem}")
        if row.logs_dropped_at:
            when = dateformat.format(timezone.localtime(row.logs_dropped_at), "j F Y")
            return RunIO(
                reason=f"The run's Darshan logs were never read, and were dropped on {when}."
            )
        started = row.read_started_at
        if started and now - started > timedelta(seconds=read_seconds):
            return RunIO(reason="Reading the run's Darshan logs did not finish.")
        since = row.sent_at or row.received_at
        if not started and now - since > timedelta(seconds=LOGS_QUEUE_WAIT_SECONDS):
            return RunIO(
                reason="The run's Darshan logs were never read: the portal's task queue did "
                "not take them. Ask the administrators to look at the darshan worker."
            )
        if not row.sent_at:
            return RunIO(
                reason="The run's Darshan logs wait for your others to be read: the portal "
                f"reads {settings.DARSHAN_CHECKS_GOING} of one person's at a time…",
                following=True,
            )
        return RunIO(reason="Reading the run's Darshan logs…", following=True)
    if not recorded(run):
        if run.in_memory and settings.RUN_DARSHAN_RUNTIME:
            return RunIO(reason=IN_MEMORY)
        return RunIO(reason="This run was not recorded with Darshan.", visible=False)
    if run.is_unfinished:
        return RunIO(reason="The I/O summary comes once the run has ended.", following=True)
    if run.status != RunStatus.COMPLETED:
        return RunIO(
            reason=f"The run ended {run.get_status_display().lower()}: no Darshan I/O summary was "
            "sent (its figure, if any, is above)."
        )
    since = run.result_received_at or run.ended_at or run.updated_at
    if now - since < timedelta(seconds=LOGS_GRACE_SECONDS):
        return RunIO(reason="The I/O summary follows the result in a few seconds…", following=True)
    return RunIO(
        reason="No Darshan log arrived from the job after its result (it may have been "
        "stopped before sending them, or could not reach the portal)."
    )


# --- retention (jobs/retention.py) -------------------------------------------------


def _logs_held(now: datetime):
    """Runs' logs still kept whose reading is over (read, unreadable, or given up)."""
    given_up = now - timedelta(seconds=LOGS_GIVEN_UP_SECONDS)
    return (
        RunLog.objects.filter(logs_dropped_at__isnull=True, missing="")
        .filter(Q(io__isnull=False) | ~Q(problem="") | Q(received_at__lt=given_up))
        .annotate(user_id=F("run__user_id"), at=F("received_at"), size=OctetLength("logs"))
    )


def _drop_logs(run_ids: list[int], now: datetime) -> int:
    return RunLog.objects.filter(pk__in=run_ids, logs_dropped_at__isnull=True).update(
        logs=b"", logs_dropped_at=now
    )


# Registered by jobio's ready(): the logs count in their owner's cap with their outputs.
KEPT_LOGS = Kept("runs' Darshan logs", _logs_held, _drop_logs)
