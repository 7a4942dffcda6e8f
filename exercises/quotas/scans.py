"""The storage scan and the portal's own purge: a job run as the account through Slurm,
on the targets it has a directory of its own on, whose answer comes back once.

- `start(account, kind)`: one going per account and kind (a double click, or a second
  start within SCAN_AGAIN_MINUTES, is given the same scan), handed to Slurm by the
  jobs' one road (jobs/app_jobs.py: a Celery task, after its place in the rate limit;
  scan_jobs.py says how a scan becomes its job there); the job script
  (templates/quotas/scan_job.sh) carries the program (treewalk.py's walk, then
  scanner.py: the scan, or the purge) and only values the portal made: validated
  directories, numbers, the site's checked patterns, in one JSON argument.
- `receive(scan, token, body, exit)`: the job's post, checked against the scan's secret,
  its size and a strict shape (Answer); a path that is not below the user's directory,
  a target not asked for, a negative count: the answer is refused, the scan fails.
- `follow(scan)`: a scan whose job ended without an answer, or ran past its time, ends
  failed, saying why (the beat's follow_scans, and a command that waits).
"""

import hmac
import json
import logging
import math
import secrets
import shlex
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Literal

from django.conf import settings
from django.db import transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from exercises.catalogue import profiles
from exercises.catalogue.models import StorageTarget
from exercises.quotas import notices, scanner, treewalk
from exercises.quotas.models import StorageScan
from exercises.quotas.status import forget_alerts
from jobs import app_jobs
from jobs.results import ResultRefused, header_number, token_hash
from jobs.slurm import SlurmError, get_client
from portal.models import ClusterAccount

log = logging.getLogger(__name__)

# What a scan's or a purge's job runs: the walk, then the scanner, as one program (the
# scanner imports the walk only where it is a module of the portal).
PROGRAM = Path(treewalk.__file__).read_text() + "\n\n" + Path(scanner.__file__).read_text()
# After its time in Slurm, the answer may take this long to arrive (the script's retries).
ANSWER_GRACE = timedelta(seconds=60)
ERROR_MAX_CHARS = 500


def scannable(targets: list[StorageTarget]) -> list[StorageTarget]:
    """The targets a job can reach the user's directory on from any node: a fixed path
    (a $TMPDIR of each job's own holds nothing between jobs)."""
    return [t for t in targets if t.variable is None]


def purged_here(targets: list[StorageTarget]) -> list[StorageTarget]:
    """The targets the portal purges itself (PURGE_TARGETS), by their profile's table."""
    return [t for t in scannable(targets) if t.key in settings.PURGE_TARGETS and t.purge_days]


def time_limit_minutes(targets: int) -> int:
    """Each target's walk, the answer's retries, and a minute to start."""
    walking = settings.SCAN_SECONDS * max(targets, 1)
    return math.ceil((walking + settings.RESULT_RETRY_SECONDS) / 60) + 1


def result_url(scan: StorageScan) -> str:
    path = reverse("quotas:scan-result", kwargs={"key": scan.key})
    return settings.PORTAL_CALLBACK_URL.rstrip("/") + path


def _spec(account: ClusterAccount, targets: list[StorageTarget], kind: str) -> dict:
    return {
        "kind": kind,
        "now": round(timezone.now().timestamp()),
        "max_entries": settings.SCAN_MAX_ENTRIES,
        "seconds": settings.SCAN_SECONDS,
        "top": settings.SCAN_TOP,
        "targets": [
            {
                "key": t.key,
                "dir": t.directory_for(account.username),
                "purge": (
                    {"days": t.purge_days, "by": t.purge_by, "exempt": t.purge_exempt}
                    if t.purge_days
                    else None
                ),
            }
            for t in targets
        ],
    }


def render_script(scan: StorageScan, targets: list[StorageTarget]) -> str:
    account = scan.account
    ctx = {
        "kind": scan.kind,
        "key": scan.key,
        "user": account.username,
        "retry_seconds": settings.RESULT_RETRY_SECONDS,
        "result_url": shlex.quote(result_url(scan)),
        "spec": shlex.quote(json.dumps(_spec(account, targets, scan.kind))),
        "program": PROGRAM,
    }
    return render_to_string("quotas/scan_job.sh", ctx)


def going(account: ClusterAccount, kind: str) -> StorageScan | None:
    """The account's scan of this kind that is still running, if any."""
    return (
        StorageScan.objects.filter(account=account, kind=kind, status=StorageScan.Status.SUBMITTED)
        .order_by("-started_at")
        .first()
    )


def latest(account: ClusterAccount, kind: str = StorageScan.Kind.SCAN) -> StorageScan | None:
    return StorageScan.objects.filter(account=account, kind=kind).order_by("-started_at").first()


def start(
    account: ClusterAccount,
    targets: list[StorageTarget],
    kind: str = StorageScan.Kind.SCAN,
    *,
    again: bool = False,
) -> StorageScan:
    """The account's scan (or purge) of the site's `targets` (those it can run on): one
    already going is returned as it is, and so is one started within SCAN_AGAIN_MINUTES
    unless `again`. A new one is saved and its job queued: a Celery task hands it to
    Slurm once this commits, after its place in the rate limit (jobs/app_jobs.py), never
    this caller (a page's request); Slurm's refusal ends it failed, saying why."""
    targets = runs_on(kind, targets)
    with transaction.atomic():
        # One start at a time per account: two clicks wait for each other here.
        ClusterAccount.objects.select_for_update().filter(pk=account.pk).first()
        recent = latest(account, kind)
        if recent is not None:
            follow(recent)
            fresh = timezone.now() - recent.started_at < timedelta(
                minutes=settings.SCAN_AGAIN_MINUTES
            )
            if recent.status == StorageScan.Status.SUBMITTED or (fresh and not again):
                return recent
        now = timezone.now()
        scan = StorageScan.objects.create(
            account=account,
            kind=kind,
            key=uuid.uuid4(),
            # Replaced by the hash of the secret that goes with the job (jobs/app_jobs.py).
            token_hash=token_hash(secrets.token_urlsafe(32)),
            started_at=now,
            # Its time in Slurm, and the answer's way back; counted again from when
            # Slurm took the job (ScanJobs.submitted).
            deadline=now + timedelta(minutes=time_limit_minutes(len(targets))) + ANSWER_GRACE,
        )
        if targets:
            app_jobs.queue(JOB_KIND, scan.pk)
    if not targets:
        fail(scan, "there is no target here this can run on")
    return scan


def runs_on(kind: str, targets: list[StorageTarget]) -> list[StorageTarget]:
    """The targets a scan or a purge runs on, of `targets`."""
    return scannable(targets) if kind == StorageScan.Kind.SCAN else purged_here(targets)


# The kind of job a scan or a purge is on the jobs' road (scan_jobs.py, registered from
# apps.py).
JOB_KIND = "storage-scan"


def fail(scan: StorageScan, why: str) -> bool:
    """Ends a running scan failed; False if it had ended already."""
    ended = StorageScan.objects.filter(pk=scan.pk, status=StorageScan.Status.SUBMITTED).update(
        status=StorageScan.Status.FAILED, error=why[:ERROR_MAX_CHARS], ended_at=timezone.now()
    )
    scan.refresh_from_db()
    return bool(ended)


def follow(scan: StorageScan) -> StorageScan:
    """Ends a running scan whose job is over without an answer (failed, saying Slurm's
    state), or that ran past its time limit and the answer's grace."""
    if scan.status != StorageScan.Status.SUBMITTED:
        return scan
    now = timezone.now()
    if scan.deadline and now > scan.deadline:
        minutes = (scan.deadline - scan.started_at).total_seconds() / 60
        fail(scan, f"no answer came within {minutes:.0f} minutes")
        return scan
    if scan.slurm_job_id is None:
        return scan  # being submitted (or its starter died: the deadline ends it)
    try:
        job = get_client().job(scan.account.username, scan.slurm_job_id)
    except SlurmError:
        return scan  # Slurm does not answer now: the next look may
    ended = job.end_time or now
    if job.state.finished and now - ended > ANSWER_GRACE:
        fail(scan, f"its job ended ({job.state.value.lower()}) without sending an answer")
    return scan


# The answer's shape. Every list is bounded, every string printable and short, every
# path relative and below the user's directory.
Count = Annotated[int, Field(ge=0, le=2**62)]
RelativePath = Annotated[str, Field(min_length=1, max_length=scanner.NAME_MAX)]


def _checked_path(path: str) -> str:
    if path.startswith("/") or ".." in path.split("/") or not path.isprintable():
        raise ValueError("a path must be printable and below the user's directory")
    return path


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Tally(_Strict):
    files: Count
    bytes: Count


class DueFile(_Strict):
    path: RelativePath
    bytes: Count
    due_at: Count

    _path = field_validator("path")(_checked_path)


class Child(_Strict):
    path: RelativePath
    bytes: Count
    files: Count

    _path = field_validator("path")(_checked_path)


class Directory(Child):
    children: list[Child] = Field(max_length=200)


class Purge(_Strict):
    due: dict[Literal["0", "1", "3", "7"], Tally]
    files: list[DueFile] = Field(max_length=200)

    @field_validator("due")
    @classmethod
    def _every_window(cls, due: dict) -> dict:
        if set(due) != {"0", "1", "3", "7"}:
            raise ValueError("due needs now and 1, 3 and 7 days")
        return due


class Walk(_Strict):
    key: str = Field(max_length=32)
    dir: str = Field(max_length=4096)
    state: Literal["done", "stopped", "missing", "unreadable"]
    why: str = Field(max_length=300)
    entries: Count = 0
    bytes: Count = 0
    unreadable: Count = 0
    seconds: float = Field(default=0.0, ge=0, le=86400)
    dirs: list[Directory] = Field(default_factory=list, max_length=200)
    purge: Purge | None = None


class Answer(_Strict):
    targets: list[Walk] = Field(max_length=64)


class Removed(_Strict):
    removed: dict[str, Tally] = Field(max_length=64)


def receive(scan: StorageScan, token: str, body: bytes, exit_header: str) -> None:
    """The job's post. Raises ResultRefused, as a run's post does: a wrong secret (403,
    checked first), a bad exit header (400), a body too large (413), a second post
    (409). An answer that fails its checks ends the scan failed."""
    if not hmac.compare_digest(token_hash(token), scan.token_hash):
        raise ResultRefused(403, "wrong token")
    exit_status = header_number(exit_header, "X-Scan-Exit", 0, 255)
    if len(body) > settings.SCAN_RESULT_MAX_BYTES:
        raise ResultRefused(413, f"the body is larger than {settings.SCAN_RESULT_MAX_BYTES} bytes")
    if scan.status != StorageScan.Status.SUBMITTED:
        raise ResultRefused(409, "this scan has ended: it was answered, or ran out of time")
    if exit_status != 0:
        said = "".join(c if c.isprintable() else " " for c in body.decode(errors="replace"))
        detail = f": {said.strip()[-200:]}" if said.strip() else ""
        fail(scan, f"the {scan.kind} job failed (exit status {exit_status}){detail}")
        return
    try:
        found = _checked(scan, body)
    except ValueError as e:
        log.warning("storage %s %s: its answer was refused: %s", scan.kind, scan.key, e)
        fail(scan, f"its answer could not be read ({e})")
        return
    StorageScan.objects.filter(pk=scan.pk, status=StorageScan.Status.SUBMITTED).update(
        status=StorageScan.Status.DONE, found=found, ended_at=timezone.now()
    )
    scan.refresh_from_db()
    forget_alerts(scan.account.user_id)  # the banner names what the purge takes
    if scan.kind == StorageScan.Kind.SCAN:
        notices.check(scan.account.user)


def _checked(scan: StorageScan, body: bytes) -> dict:
    """Per target key, the walk (or what was removed), once its shape and its paths hold."""
    try:
        data = json.loads(body)
        model = Answer if scan.kind == StorageScan.Kind.SCAN else Removed
        answer = model.model_validate(data)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        raise ValueError("not JSON") from None
    except ValidationError as e:
        raise ValueError(f"{e.error_count()} problem(s) in its shape") from None
    profile_targets = {
        t.key: t.directory_for(scan.account.username)
        for t in StorageTarget.objects.filter(profile__name=settings.SITE_PROFILE)
    }
    if isinstance(answer, Removed):
        unknown = set(answer.removed) - set(profile_targets)
        if unknown:
            raise ValueError(f"targets not asked for: {', '.join(sorted(unknown))}")
        return {key: tally.model_dump() for key, tally in answer.removed.items()}
    found = {}
    for walk in answer.targets:
        if profile_targets.get(walk.key) != walk.dir:
            raise ValueError(f"{walk.key!r} is not a target of this scan at {walk.dir!r}")
        found[walk.key] = walk.model_dump()
    return found


# At most this many jobs a periodic round submits: a site of thousands spreads them
# over the hours instead of sending them to Slurm at once.
ROUND_MAX = 200


def start_due(kind: str) -> int:
    """The periodic round: a scan (or, where the portal purges, a purge) for each account
    whose last one is older than SCAN_INTERVAL_HOURS (PURGE_INTERVAL_HOURS); scans only
    for accounts whose user logged in within SCAN_ACTIVE_DAYS. Returns how many started."""
    profile = profiles.active()
    if profile is None:
        return 0
    targets = list(profile.targets.all())
    now = timezone.now()
    if kind == StorageScan.Kind.SCAN:
        hours = settings.SCAN_INTERVAL_HOURS
        accounts = ClusterAccount.objects.filter(
            user__last_login__gte=now - timedelta(days=settings.SCAN_ACTIVE_DAYS)
        )
    else:
        hours = settings.PURGE_INTERVAL_HOURS
        accounts = ClusterAccount.objects.all()
        if not purged_here(targets):
            return 0
    if hours <= 0:
        return 0
    recent = StorageScan.objects.filter(kind=kind, started_at__gte=now - timedelta(hours=hours))
    due = accounts.exclude(pk__in=recent.values("account_id")).order_by("pk")[:ROUND_MAX]
    started = 0
    for account in due:
        scan = start(account, targets, kind, again=True)
        started += scan.status == StorageScan.Status.SUBMITTED
    return started
