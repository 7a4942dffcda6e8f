import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone


class CheckSource(models.TextChoices):
    UPLOAD = "upload", "Uploaded log"
    LOG_DIR = "log_dir", "The site's Darshan logs"


class JobCheck(models.Model):
    """A user's job, checked from its Darshan log. An upload's bytes wait here for the
    task that reads them (jobio/tasks.py), which keeps only the job's I/O (JobIO) and drops the
    bytes; a log in the site's directory is looked for by that task. A log that cannot
    be read leaves no check behind (jobio/checks.py: fail)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="job_checks"
    )
    created_at = models.DateTimeField(default=timezone.now)
    source = models.CharField(max_length=8, choices=CheckSource.choices)
    # Shown to its owner only, escaped; never used as a path.
    label = models.CharField(max_length=120)
    # LOG_DIR: the Slurm job whose log the worker looks for, and the UID that log must
    # be owned and written by (the user's cluster account).
    job_id = models.PositiveBigIntegerField(null=True, blank=True)
    expected_uid = models.PositiveIntegerField(null=True, blank=True)
    # An upload's bytes, until they are read.
    log = models.BinaryField(null=True, blank=True, editable=False)
    # When the task began reading (a check begun long ago and still unread lost its
    # reader: jobio/checks.py, end_lost).
    read_started_at = models.DateTimeField(null=True, blank=True)
    io = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.user} · {self.label}"

    @property
    def reading(self) -> bool:
        return self.io is None


class RunLogQuerySet(models.QuerySet):
    def unread(self) -> "RunLogQuerySet":
        """Logs that came and have not been read (nor found unreadable) yet."""
        return self.filter(io__isnull=True, problem="", missing="", logs_dropped_at__isnull=True)


class RunLog(models.Model):
    """A lab run's own Darshan logs, one per process, as its job sent them (jobio/runs.py),
    and the I/O read from them. Kept with the run (bounded: RUN_DARSHAN_MAX_BYTES)
    and removed with it; the logs themselves only as long as retention keeps them
    (jobs/retention.py), the I/O for good."""

    run = models.OneToOneField(
        "jobs.BenchmarkRun", on_delete=models.CASCADE, primary_key=True, related_name="darshan"
    )
    received_at = models.DateTimeField(default=timezone.now)
    # The logs one after the other, and where each ends (checked when they arrived).
    logs = models.BinaryField(default=b"", editable=False)
    sizes = models.JSONField(default=list)
    # Why the run has no logs, in the portal's words: the job said why it sent none
    # (jobio/runs.py: MISSING), or the portal did not take them (too late, beyond their
    # owner's limits: jobio/runs.py, receive).
    missing = models.CharField(max_length=500, blank=True)
    # When their read was handed to the reader's queue; none while they wait for one
    # of their owner's DARSHAN_CHECKS_GOING places there (jobio/runs.py: send_next).
    sent_at = models.DateTimeField(null=True, blank=True)
    read_started_at = models.DateTimeField(null=True, blank=True)
    io = models.JSONField(null=True, blank=True)
    # Why the logs that came could not be read.
    problem = models.CharField(max_length=500, blank=True)
    # When retention dropped the logs (the I/O stays).
    logs_dropped_at = models.DateTimeField(null=True, blank=True)

    objects = RunLogQuerySet.as_manager()

    class Meta:
        verbose_name = "run's Darshan log"
        indexes = [
            # The few in line to be read, among every run's: looked at on each post.
            models.Index(
                fields=["received_at"],
                name="runlog_unread",
                condition=models.Q(io__isnull=True, problem="", missing=""),
            ),
            # The logs still kept, by when they came: what retention looks through.
            models.Index(
                fields=["received_at"],
                name="runlog_logs_kept",
                condition=models.Q(logs_dropped_at__isnull=True, missing=""),
            ),
        ]

    def __str__(self) -> str:
        return f"Darshan logs of {self.run}"


class Replay(models.Model):
    """A checked job's I/O replayed on some targets as its owner (jobio/replays.py):
    the workload replay_of built from the check's numbers, what it kept and what it
    could not, and one run per target (BenchmarkRun.replay). Removed with its check."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="replays"
    )
    check_of = models.ForeignKey(JobCheck, on_delete=models.CASCADE, related_name="replays")
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    engine = models.CharField(max_length=8)
    workload = models.JSONField()
    # What the job moved (written, or read for a job that only read), and what the
    # replay does once through its files (a timed one goes on for its seconds).
    job_bytes = models.PositiveBigIntegerField()
    replay_bytes = models.PositiveBigIntegerField()
    kept = models.JSONField(default=list)
    not_kept = models.JSONField(default=list)
    # Target key -> how its run was sized, where a run's size was the target's own
    # (mdtest's rounds: jobio/replay.py, sized_for): "1,000 files 12 times over, for
    # exercise 6's 28,574 creates a second here (...)"; or why it could not be.
    sized = models.JSONField(default=dict)
    # Staging onto a node's own storage, counted at the keeper's streaming figure as it
    # stood when the last run ended (jobio/replay_figures.py): {"key", "name", "mib_s",
    # "source"}; a figure measured after the replay does not change what it said.
    staging = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["user", "-created_at"])]

    def __str__(self) -> str:
        return f"replay of {self.check_of_id}"
