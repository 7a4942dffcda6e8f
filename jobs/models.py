import statistics
import uuid
from collections import defaultdict
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone

from jobs.engines import ENGINE_CHOICES, Workload
from jobs.figures import RATE_FIELDS, figure, plausible_q, series_figures
from jobs.places import variable_of
from jobs.stored import Space, kept


class RunStatus(models.TextChoices):
    # Beyond the trainee's cap: starts (as QUEUED) in order when a slot frees up.
    WAITING = "waiting", "Waiting for a free slot"
    QUEUED = "queued", "Queued"  # saved, not yet handed to Slurm
    SUBMITTED = "submitted", "Submitted"  # Slurm gave it a job id
    PENDING = "pending", "Pending"  # waiting for a node
    RUNNING = "running", "Running"
    COMPLETED = "completed", "Completed"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"
    TIMED_OUT = "timed_out", "Timed out"
    LOST = "lost", "Lost"  # Slurm no longer knows the job and no result came back


# A run holds one of its user's slots (the caps: jobs/slots.py) from QUEUED to its end.
ACTIVE_STATUSES = (RunStatus.QUEUED, RunStatus.SUBMITTED, RunStatus.PENDING, RunStatus.RUNNING)
# Not ended yet: going, or waiting for a slot. Pages keep following these.
UNFINISHED_STATUSES = (RunStatus.WAITING, *ACTIVE_STATUSES)
IN_SLURM_STATUSES = (RunStatus.SUBMITTED, RunStatus.PENDING, RunStatus.RUNNING)


class BenchmarkRun(models.Model):
    """One benchmark job on one storage target, from the click to the numbers."""

    key = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    # Snapshots taken when the run starts: later edits of accounts or targets
    # must not rewrite what a past run did.
    cluster_username = models.CharField(max_length=32)
    target = models.ForeignKey("catalogue.StorageTarget", on_delete=models.PROTECT)
    # What the run was for (the workload itself is a snapshot, below).
    exercise = models.ForeignKey(
        "catalogue.Exercise", null=True, blank=True, on_delete=models.SET_NULL, related_name="runs"
    )
    # The course the run counts for (its class figures), if any.
    course = models.ForeignKey(
        "courses.Course", null=True, blank=True, on_delete=models.SET_NULL, related_name="runs"
    )
    # The calibration round it measures for, if any (never a class figure).
    calibration = models.ForeignKey(
        "calibration.Calibration",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="runs",
    )
    # The replay of a user's job it measures for, if any (jobio/replays.py; never a
    # class figure: it is of no exercise).
    replay = models.ForeignKey(
        "jobio.Replay", null=True, blank=True, on_delete=models.CASCADE, related_name="runs"
    )
    target_directory = models.CharField(max_length=255)
    in_memory = models.BooleanField(default=False)
    engine = models.CharField(max_length=8, choices=ENGINE_CHOICES, default="fio")
    workload = models.JSONField()
    time_limit_minutes = models.PositiveIntegerField()

    status = models.CharField(
        max_length=16, choices=RunStatus.choices, default=RunStatus.QUEUED, db_index=True
    )
    status_reason = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    updated_at = models.DateTimeField(default=timezone.now)

    # Submission: the attempt marker makes a retried submit adopt the job a
    # crashed attempt may have created instead of submitting a second one.
    submit_attempts = models.PositiveIntegerField(default=0)
    submit_attempted_at = models.DateTimeField(null=True, blank=True)
    job_script = models.TextField(blank=True)

    # What Slurm said.
    slurm_job_id = models.PositiveBigIntegerField(null=True, blank=True, db_index=True)
    slurm_state = models.CharField(max_length=32, blank=True)
    slurm_reason = models.CharField(max_length=128, blank=True)
    exit_code = models.IntegerField(null=True, blank=True)
    exit_signal = models.IntegerField(null=True, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    # The node(s) its job ran on, as Slurm writes them ("c1", "node[1-2]"): which runs
    # shared a node's own directory with it (jobs/company.py).
    node_names = models.CharField(max_length=255, blank=True)
    output_path = models.CharField(max_length=512, blank=True)

    # What the job sent back. Only the secret's hash is kept.
    result_token_hash = models.CharField(max_length=64)
    result_received_at = models.DateTimeField(null=True, blank=True)
    benchmark_exit_code = models.IntegerField(null=True, blank=True)
    raw_output = models.TextField(blank=True)
    # When the raw output was dropped (jobs/retention.py): it came, was read, and is
    # no longer kept; its figures, or why there are none, stay.
    raw_output_dropped_at = models.DateTimeField(null=True, blank=True)
    parse_error = models.TextField(blank=True)
    # Reading the output (jobs/results.py): when its task was last sent, and how many
    # times a reader started on it (a reader killed twice does not get a third go).
    ingest_sent_at = models.DateTimeField(null=True, blank=True)
    ingest_attempts = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["user", "-created_at"]),
            models.Index(fields=["exercise", "status"]),
            models.Index(fields=["course", "exercise"]),
            # The runs that started on a target around a run's time (jobs/company.py).
            models.Index(fields=["target", "started_at"], name="run_target_started"),
            # The outputs still kept, by when they came: what retention looks through.
            models.Index(
                fields=["result_received_at"],
                name="run_output_kept",
                condition=models.Q(
                    result_received_at__isnull=False, raw_output_dropped_at__isnull=True
                ),
            ),
        ]

    def __str__(self) -> str:
        return f"run {self.key} ({self.status})"

    @property
    def job_name(self) -> str:
        return f"storagelab-{self.key.hex[:12]}"

    def output_file(self, job_id: int | str) -> str:
        """Where Slurm writes the job's output (job_spec names it with "%j", Slurm's
        pattern for the job id). The script removes it once the portal has the result."""
        return f"{self.target_directory}/{self.job_name}-{job_id}.out"

    @property
    def target_variable(self) -> str | None:
        """The variable that names the target's directory on the job's node ("TMPDIR"),
        if one does: then only the job script knows where that is (jobs/places.py)."""
        return variable_of(self.target_directory)

    @property
    def node_local(self) -> bool:
        """Whether its directory is one each node has its own of (a variable such as
        $TMPDIR, memory, a target not shared): such a run asks Slurm for one node, and
        shares its directory only with runs on that node (jobs/company.py, whose SQL
        says the same: node_local_sql)."""
        return bool(self.target_variable) or self.in_memory or not self.target.shared

    @property
    def run_directory(self) -> str:
        """The fresh directory the benchmark works in (removed at the end)."""
        return f"{self.target_directory}/storagelab-run-{self.key.hex[:12]}"

    @property
    def workload_params(self) -> Workload:
        return Workload.model_validate(self.workload)

    @property
    def is_active(self) -> bool:
        return self.status in ACTIVE_STATUSES

    @property
    def is_unfinished(self) -> bool:
        """Waiting for a slot, or going: its page follows it and it may be cancelled."""
        return self.status in UNFINISHED_STATUSES

    @property
    def figure_pending(self) -> bool:
        """Completed, and its output is being read (or awaited within the grace): its
        figure, or why there is none, is on its way. Pages keep following it."""
        if self.status != RunStatus.COMPLETED or self.parse_error:
            return False
        return not hasattr(self, "result") and not self.result_missing

    @property
    def result_missing(self) -> bool:
        """Slurm says it completed, yet its output never reached the portal."""
        if self.status != RunStatus.COMPLETED or self.result_received_at:
            return False
        ended = self.ended_at or self.updated_at
        return timezone.now() - ended > timedelta(seconds=settings.RESULT_GRACE_SECONDS)


@dataclass(frozen=True)
class Rates:
    """The file operations per second of some runs on one target: how many runs gave
    any, and the median of each of RATE_FIELDS (None where none could be true)."""

    runs: int
    medians: dict[str, float | None]


Groups = dict[tuple, list[float]]  # the values of the lookups grouped by -> figures


class RunResultQuerySet(models.QuerySet):
    """The figures of many results: each judged by jobs/figures.py, in SQL, so that a
    figure that cannot be true is left out of every median as it is of every page."""

    def plausible(self, field: str) -> "RunResultQuerySet":
        """Results whose `field` (a bandwidth or a rate) can be true."""
        return self.filter(plausible_q(field))

    def figures(self, field: str, *by: str) -> Groups:
        """The figures of `field` people read (MiB/s, or files per second), grouped
        by the values of the lookups `by` ("run__target_id", ...), each group's
        figures oldest first; results without a true one left out (1 query). A
        figure counts once Slurm says its run completed: a job posts its output
        before it ends, and a page must not count a figure beside a run it still
        shows as running."""
        rows = (
            self.plausible(field)
            .filter(run__status=RunStatus.COMPLETED)
            .order_by("created_at", "pk")
            .values_list(*by, field, "processes")
        )
        found: Groups = defaultdict(list)
        for *group, value, processes in rows:
            found[tuple(group)].append(figure(field, value, processes))
        return dict(found)

    def people_medians(self, field: str, *by: str) -> Groups:
        """Per group, each person's median of `field`: a class's figure counts each
        trainee once, so one trainee's double click or five repeats do not pull it
        (1 query)."""
        found: Groups = defaultdict(list)
        for (*group, _user), values in self.figures(field, *by, "run__user_id").items():
            found[tuple(group)].append(statistics.median(values))
        return dict(found)

    def rates_by_target(self) -> dict[int, "Rates"]:
        """Target id -> the rates of these results: how many runs gave any, and the
        median of each (1 query)."""
        found: dict[int, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
        runs: dict[int, int] = defaultdict(int)
        completed = self.filter(run__status=RunStatus.COMPLETED)  # as figures() counts
        for target_id, processes, *values in completed.values_list(
            "run__target_id", "processes", *RATE_FIELDS
        ):
            true = {
                name: rate
                for name, value in zip(RATE_FIELDS, values, strict=True)
                if (rate := figure(name, value, processes)) is not None
            }
            runs[target_id] += bool(true)
            for name, rate in true.items():
                found[target_id][name].append(rate)
        return {
            target_id: Rates(
                runs=runs[target_id],
                medians={
                    name: statistics.median(found[target_id][name])
                    if found[target_id][name]
                    else None
                    for name in RATE_FIELDS
                },
            )
            for target_id in runs
        }


class RunResult(models.Model):
    """The parsed figures of a run. Throughput in bytes/s, latency in µs, metadata
    operations per second."""

    run = models.OneToOneField(BenchmarkRun, on_delete=models.CASCADE, related_name="result")
    engine = models.CharField(max_length=8, choices=ENGINE_CHOICES)
    processes = models.PositiveIntegerField()
    write_bytes_per_s = models.FloatField(null=True, blank=True)
    read_bytes_per_s = models.FloatField(null=True, blank=True)
    write_iops = models.FloatField(null=True, blank=True)
    read_iops = models.FloatField(null=True, blank=True)
    write_latency_us = models.JSONField(null=True, blank=True)
    read_latency_us = models.JSONField(null=True, blank=True)
    # Metadata operations per second (mdtest), all processes together.
    create_ops_s = models.FloatField(null=True, blank=True)
    stat_ops_s = models.FloatField(null=True, blank=True)
    read_ops_s = models.FloatField(null=True, blank=True)
    remove_ops_s = models.FloatField(null=True, blank=True)
    # A sweep of request sizes (Workload.block_sizes): [[request bytes, write bytes/s],
    # ...], smallest first; write_bytes_per_s is the largest's.
    series = models.JSONField(null=True, blank=True)
    # On a target that compresses (StorageTarget.stored_by): the bytes the run's files
    # hold, and those the target stored for them (jobs/stored.py).
    held_bytes = models.PositiveBigIntegerField(null=True, blank=True)
    stored_bytes = models.PositiveBigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    objects = RunResultQuerySet.as_manager()

    def __str__(self) -> str:
        return f"result of {self.run_id}"

    def figure(self, field: str) -> float | None:
        """`field` as people read it (MiB/s, files per second); None for none, or for
        one that cannot be true (jobs/figures.py)."""
        return figure(field, getattr(self, field), self.processes)

    @property
    def write_mib_s(self) -> float | None:
        return self.figure("write_bytes_per_s")

    @property
    def read_mib_s(self) -> float | None:
        return self.figure("read_bytes_per_s")

    @property
    def series_mib_s(self) -> list[tuple[int, float | None]]:
        """A sweep's figures as people read them: (request bytes, MiB/s), smallest
        first (none but a sweep's)."""
        return series_figures(self.series, self.processes)

    @property
    def space(self) -> Space | None:
        """What its files took on a target that compresses, if it was measured."""
        return kept(self.held_bytes, self.stored_bytes)

    @property
    def has_figures(self) -> bool:
        """Any figure that can be true: a result with none is shown as such."""
        fields = ("write_bytes_per_s", "read_bytes_per_s", *RATE_FIELDS)
        return any(self.figure(name) is not None for name in fields)

    @property
    def rates(self) -> dict[str, float | None]:
        """The file operations per second of each of RATE_FIELDS (figure)."""
        return {name: self.figure(name) for name in RATE_FIELDS}
