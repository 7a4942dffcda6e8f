"""Jobs that are no benchmark run, of the apps above (a storage scan, a purge): the
second half of the one road to Slurm (jobs/admission.py is the first, for runs).

An app registers its kind of job from its ready() (`register`), as apps plug their
checks into portal/health.py: how one of its rows becomes a job as its account, and
what Slurm's answer does to the row (AppJobs). It asks for a row's job with
`queue(kind, row_id)` inside its transaction; once that commits, a Celery task
(`submit_app_job`) takes the job's place in the portal-wide rate limit
(jobs/ratelimit.py), asks the app for the job, and hands it to Slurm. So no request
talks to Slurm, and a beat's round of 200 scans goes at SLURM_SUBMIT_RATE a second
with the class's runs, not past them.

Such a job takes none of its owner's slots and meets no quota: it measures nothing
and writes no data of the user's (a scan reads names and sizes, a purge removes what
the site's policy says), and its app keeps it to one at a time per account and kind.

Once: the app gives a job only while its row still waits for one, and a task that
tries again after Slurm did not answer (a timeout: the job may have been taken)
first looks for the job by its name and owner and adopts it. The job's secret is
made here, its hash handed to the app before the job goes (a job may post at once).
"""

import logging
import secrets
from functools import partial
from typing import Protocol

from celery import shared_task
from celery.app.task import Task
from django.db import transaction
from kombu.exceptions import OperationalError as BrokerUnavailable

from jobs.ratelimit import RateLimited, take_submit_slot
from jobs.results import token_hash
from jobs.scripts import CALLBACK_ENV
from jobs.slurm import JobSpec, SlurmClient, SlurmError, get_client

log = logging.getLogger(__name__)

BROKER_DOWN = (
    "the portal's task queue did not answer, so the job could not be sent to the "
    "cluster; try again in a few minutes"
)


class AppJobs(Protocol):
    """An app's kind of job, by the id of the row that stands for one."""

    def job(self, row_id: int) -> tuple[str, JobSpec] | None:
        """The row's job now, as (cluster account, spec without its secret); None when
        the row wants none any more (it ended, or has its job)."""

    def secret(self, row_id: int, hashed: str) -> None:
        """Keeps the hash of the secret the job posts with (before the job goes)."""

    def submitted(self, row_id: int, job_id: int) -> None:
        """Slurm took the job."""

    def failed(self, row_id: int, why: str) -> None:
        """The job will not go: Slurm refused it, or the task queue was away."""


_kinds: dict[str, AppJobs] = {}


def register(kind: str, jobs: AppJobs) -> None:
    """An app's kind of job, from its ready() (again: the same)."""
    _kinds[kind] = jobs


def queue(kind: str, row_id: int) -> None:
    """Has the row's job handed to Slurm once the current transaction commits (at once
    outside of one), by a task that takes its place in the rate limit."""
    if kind not in _kinds:
        raise LookupError(f"no kind of job {kind!r} is registered (jobs/app_jobs.py: register)")
    transaction.on_commit(partial(_send, kind, row_id))


def _send(kind: str, row_id: int) -> None:
    try:
        submit_app_job.delay(kind, row_id)
    except BrokerUnavailable as e:
        log.warning("%s %s: its submit task could not be sent (%s)", kind, row_id, e)
        _kinds[kind].failed(row_id, BROKER_DOWN)


def _adopted(client: SlurmClient, user: str, name: str) -> int | None:
    """The job an earlier attempt handed Slurm: its name, and its user (job names are
    public; another user could name a job of theirs so)."""
    for job in client.jobs(user) or []:
        if job.user_name == user and job.name == name:
            return job.job_id
    return None


# No retry limit: the row waits while Slurm is away, and its app ends it when its time
# is over (a scan's deadline); a retry finds then no job wanted.
@shared_task(name="jobs.tasks.submit_app_job", bind=True, max_retries=None, throws=(SlurmError,))
def submit_app_job(
    self: Task, kind: str, row_id: int, slot_taken: bool = False, tried: bool = False
) -> None:
    """Hands the row's job to Slurm, once, after its place in the rate limit."""
    jobs = _kinds[kind]
    if not slot_taken:
        try:
            take_submit_slot()
        except RateLimited as e:
            kwargs = {"slot_taken": e.reserved, "tried": tried}
            raise self.retry(countdown=e.delay, args=(kind, row_id), kwargs=kwargs) from None
    wanted = jobs.job(row_id)
    if wanted is None:
        return
    user, spec = wanted
    client = get_client()
    try:
        job_id = _adopted(client, user, spec.name) if tried else None
        if job_id is None:
            token = secrets.token_urlsafe(32)
            jobs.secret(row_id, token_hash(token))
            environment = {**spec.environment, CALLBACK_ENV: token}
            job_id = client.submit(user, spec.model_copy(update={"environment": environment}))
    except SlurmError as e:
        if e.permanent:
            jobs.failed(row_id, f"Slurm did not take the job: {e}")
            return
        # Whether Slurm took it is unknown: the next try looks for it first. It takes a
        # place in the rate limit again: a slurmrestd back must not get them all at once.
        countdown = min(2 ** min(self.request.retries, 5), 30)
        kwargs = {"slot_taken": False, "tried": True}
        raise self.retry(exc=e, countdown=countdown, args=(kind, row_id), kwargs=kwargs) from None
    jobs.submitted(row_id, job_id)
