"""Following runs: one cycle (Celery beat, every SYNC_INTERVAL_SECONDS) asks Slurm
about every active run at once, with ONE `GET /jobs` whatever their number, and
records what changed; then the slots the ended runs freed go to waiting runs."""

import time
from datetime import datetime, timedelta

from celery import shared_task
from django.conf import settings
from django.core.cache import cache
from django.utils import timezone

from jobs import lost
from jobs.admission import queue_waiting_everywhere
from jobs.handover import resubmit_stale
from jobs.models import IN_SLURM_STATUSES, UNFINISHED_STATUSES, BenchmarkRun, RunStatus
from jobs.results import send_stranded
from jobs.scripts import NO_ROOM
from jobs.slurm import SlurmError, SlurmJob, get_client
from jobs.slurm.hostlist import clipped
from jobs.slurm.models import JobList, JobState
from jobs.states import FROM_SLURM, transition

# Where the sync stands on Slurm's clock (see changes_since).
SLURM_CLOCK_KEY = "jobs:sync:slurm-clock"
# The job script's exit status when it refuses an unsafe directory (EX_CONFIG), and
# when a target said to be btrfs (StorageTarget.stored_by) is not (EX_CONFIG + 1).
REFUSED_DIRECTORY = 78
NOT_BTRFS = 79
SYNC_LOCK_KEY = "jobs:sync:lock"
NODE_NAMES_LENGTH = BenchmarkRun._meta.get_field("node_names").max_length


def sync() -> int | None:
    """One cycle of following runs. Returns how many runs it looked at (None if
    skipped: the previous cycle still runs)."""
    if not cache.add(SYNC_LOCK_KEY, 1, timeout=settings.SYNC_LOCK_SECONDS):
        return None
    try:
        resubmit_stale()
        send_stranded()
        followed = follow_runs()
        # Right after the ends this cycle saw, and for any slot freed otherwise since
        # the last cycle (a failed submission): waiting runs never wait on a free slot.
        queue_waiting_everywhere()
        return followed
    finally:
        cache.delete(SYNC_LOCK_KEY)


def follow_runs() -> int:
    """Brings every run in Slurm up to date. Returns how many."""
    # Every 2 s, up to a class's 800 runs: not their job scripts, workloads and
    # outputs, which nothing here reads (a script is a few KiB, an output up to 4 MiB).
    in_slurm = BenchmarkRun.objects.filter(status__in=IN_SLURM_STATUSES)
    runs = list(in_slurm.defer("job_script", "workload", "raw_output"))
    if not runs:
        return 0
    started = timezone.now()
    jobs = get_client().jobs(settings.SLURM_SERVICE_USER, since=changes_since())
    if jobs is None:
        return len(runs)  # nothing changed since the last change we read
    # slurmctld answers a changed list with every job it holds (all or nothing).
    by_id = {job.job_id: job for job in jobs}
    for run in runs:
        job = by_id.get(run.slurm_job_id)
        if job is not None:
            apply_job(run, job)
        else:
            lost.job_not_listed(run, started)
    remember_last_change(jobs)  # only once every run has been brought up to date
    return len(runs)


def changes_since() -> datetime | None:
    """The update_time of the next job list: a time on Slurm's clock, never the
    portal's. (A portal clock ahead of Slurm's would ask for changes "since the
    future", be told that nothing changed, and freeze every run.)

    Slurm keeps its last change in whole seconds and answers the whole list when that
    change is in the asked second or later. A change may still come in the second of
    the list we read, after we read it. So the sync asks again from that second (the
    whole list again) until a list read at least two seconds later shows the same
    last change; from then on it asks for what came after it: "nothing changed" until
    anything does."""
    mark = cache.get(SLURM_CLOCK_KEY)
    if not isinstance(mark, dict):
        return None
    if mark["confirmed"]:
        return mark["last_update"] + timedelta(seconds=1)
    return mark["last_update"]


def remember_last_change(jobs: JobList) -> None:
    """Notes the last change of a whole list just read (see changes_since)."""
    mark = cache.get(SLURM_CLOCK_KEY)
    now = time.time()  # only differences of it are used: they hold on any clock
    if jobs.last_update is None:
        cache.delete(SLURM_CLOCK_KEY)
    elif isinstance(mark, dict) and mark["last_update"] == jobs.last_update:
        confirmed = now - mark["first_read"] >= 2
        cache.set(SLURM_CLOCK_KEY, dict(mark, confirmed=confirmed), timeout=None)
    else:
        first = {"last_update": jobs.last_update, "first_read": now, "confirmed": False}
        cache.set(SLURM_CLOCK_KEY, first, timeout=None)


def apply_job(run: BenchmarkRun, job: SlurmJob) -> None:
    """Records what Slurm says of the run's job, moving its status if it changed."""
    status = FROM_SLURM.get(job.state)
    fields = {
        "slurm_state": job.state.value,
        "slurm_reason": job.reason[:128],
        "exit_code": job.return_code,
        "exit_signal": job.signal,
        # Slurm's times of a job that has not started or ended yet are its forecasts
        # (a pending job's expected start, a running job's start plus its time limit),
        # which the scheduler moves every few cycles: no page shows them as what
        # happened, and a moving forecast is no change to a run.
        "started_at": job.start_time if job.state != JobState.PENDING else None,
        "ended_at": job.end_time if status and status not in UNFINISHED_STATUSES else None,
        # Where it runs, once it does (a pending job's nodes would be a plan).
        "node_names": clipped(job.nodes, NODE_NAMES_LENGTH)
        if job.state != JobState.PENDING
        else "",
        # Written by the job script (Slurm writes none: jobs/scripts.py, job_spec); on a
        # directory only the node knows, no path the portal could name.
        "output_path": "" if run.target_variable else run.output_file(job.job_id),
    }
    unchanged = all(getattr(run, name) == value for name, value in fields.items())
    if unchanged and status in (None, run.status):
        return  # most cycles, for most runs: no write at all
    if status and status != run.status:
        reason = explain(job, status, fields["output_path"])
        if transition(run.pk, status, status_reason=reason, **fields):
            return
    # Slurm's word on a run whose status stays (a pending job's reason, COMPLETING) is
    # for the run's own page, which reads it afresh at each poll. It is no change that
    # the runs panels and the class overview follow (updated_at): when a partition
    # comes up, the scheduler re-words every pending job at once, and a class's
    # thousand panels were redrawn and followed every 2 s for it (p95 above 3 s).
    BenchmarkRun.objects.filter(pk=run.pk).update(**fields)


def explain(job: SlurmJob, status: RunStatus, output: str) -> str:
    """What to tell the user about a job that ended otherwise than well; `output`: the
    job's output file, "" on a directory only its node knows."""
    if not output:
        where = f"Job {job.job_id}; its output file was in the target's directory on its node."
    else:
        where = f"Job {job.job_id}; its output, if it got as far, is in {output}."
    if status == RunStatus.FAILED:
        if job.state == JobState.NODE_FAIL:
            return (
                "The node running the job stopped answering, so Slurm ended it: nothing of "
                f"this run was measured. Start it again; it goes to a node that is up. {where}"
            )
        if job.reason == "JobLaunchFailure":
            return f"Slurm could not start the job (missing or unwritable directory?). {where}"
        if job.return_code == REFUSED_DIRECTORY:
            return (
                "Nothing was run: the target directory must exist and be yours alone (owned "
                "by you, writable by nobody else, not a link; for a target such as $TMPDIR, "
                "set on the node), as every directory above it (root's or yours, writable by "
                "no one else unless sticky, as /tmp), and the run's own directory must not "
                f"exist yet. {where}"
            )
        if job.return_code == NO_ROOM:
            return (
                "Nothing was run: when the job started, the target's filesystem had fewer "
                "free inodes than this run makes files at once. Every file takes one, and "
                "other users share them: the run would have filled it up for them. Choose "
                f"another target, or try again later. {where}"
            )
        if job.return_code == NOT_BTRFS:
            return (
                "Nothing was run: this target measures the space each run's files take in a "
                "btrfs subvolume of the run's own, and its directory is not on btrfs. Tell "
                f"the site's staff: the target's stored_by setting is wrong. {where}"
            )
        code = f"signal {job.signal}" if job.signal else f"exit code {job.return_code}"
        return f"The job failed ({code}, {job.reason or job.state}). {where}"
    if status == RunStatus.TIMED_OUT:
        return f"The job hit its time limit and was stopped. {where}"
    if status == RunStatus.CANCELLED:
        return f"The job was cancelled. {where}"
    return ""


# The name is the one the beat schedule uses (the task lived in jobs/tasks.py).
@shared_task(name="jobs.tasks.sync_runs", throws=(SlurmError,))
def sync_runs() -> None:
    sync()
