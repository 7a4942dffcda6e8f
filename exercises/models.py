"""The teaching domain: a site's storage targets, the exercises run on them and
the site's reference numbers. A site profile (exercises/profiles/NAME.toml) fills
these; the admin edits them."""

import re
import secrets

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models
from django.utils import timezone

from exercises import lessons
from jobs.engines import ENGINE_CHOICES, Pattern, Target, Workload, get_engine
from portal.models import cluster_username_validator

# Absolute, plain path characters, and the cluster user name in place of {user}.
_PATH_TEMPLATE = re.compile(r"^/[A-Za-z0-9_./-]*\{user\}[A-Za-z0-9_./-]*\Z")


def validate_path_template(value: str) -> None:
    if not _PATH_TEMPLATE.match(value) or ".." in value or value.count("{user}") != 1:
        raise ValidationError(
            "An absolute path of letters, digits, '_', '.', '-' and '/', with {user} "
            "once where the cluster account name goes, e.g. /scratch/{user}."
        )


# A target's name as users know it ("$GLOBAL", "BeeGFS fast"): it is shown in pages
# and written into job scripts, so only plain characters, and no leading '-'.
target_name_validator = RegexValidator(
    r"^[A-Za-z0-9$_][A-Za-z0-9$_ .+/-]*\Z",
    "A target name is letters, digits, spaces and $ _ . + / - (not first: space, "
    "'-', '.', '+' or '/'), e.g. $GLOBAL or BeeGFS fast.",
)


class SiteProfile(models.Model):
    name = models.SlugField(max_length=32, unique=True)
    title = models.CharField(max_length=120)
    description = models.TextField(blank=True)
    engine = models.CharField(max_length=8, choices=ENGINE_CHOICES, default="fio")
    node_memory_gib = models.PositiveIntegerField(
        default=64, help_text="Memory of a typical compute node"
    )

    def __str__(self) -> str:
        return self.title


class StorageTarget(models.Model):
    """A filesystem users can put their data on ($HOME, $GLOBAL, $TMPDIR, ...)."""

    profile = models.ForeignKey(SiteProfile, on_delete=models.CASCADE, related_name="targets")
    key = models.SlugField(max_length=32)
    name = models.CharField(
        max_length=32,
        validators=[target_name_validator],
        help_text="As users know it, e.g. $GLOBAL",
    )
    order = models.PositiveIntegerField(default=0)
    filesystem = models.CharField(max_length=64, help_text="e.g. NFS, GPFS, BeeGFS, tmpfs")
    path_template = models.CharField(
        max_length=255,
        validators=[validate_path_template],
        help_text="The user's own directory on it, e.g. /scratch/{user}",
    )
    in_memory = models.BooleanField(
        default=False, help_text="tmpfs and the like: no O_DIRECT, space comes from RAM"
    )
    persistent = models.BooleanField(default=True, help_text="Data outlives the job")
    shared = models.BooleanField(default=True, help_text="Every node sees the same data")
    summary = models.TextField(blank=True)
    size = models.CharField(max_length=120, blank=True)
    default_quota = models.CharField(max_length=120, blank=True)
    quota_bytes = models.PositiveBigIntegerField(null=True, blank=True)
    peak_speed = models.CharField(max_length=120, blank=True)
    redundancy = models.CharField(max_length=200, blank=True)
    hardware = models.TextField(blank=True)
    purge_policy = models.CharField(max_length=200, blank=True)
    use_for = models.JSONField(default=list, blank=True)
    avoid_for = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["order", "key"]
        constraints = [
            models.UniqueConstraint(fields=["profile", "key"], name="target_key_per_profile")
        ]

    def __str__(self) -> str:
        return self.name

    def directory_for(self, cluster_username: str) -> str:
        validate_path_template(self.path_template)
        cluster_username_validator(cluster_username)
        return self.path_template.replace("{user}", cluster_username)


class Exercise(models.Model):
    """One measurement of the lab, with the workload it runs and how to read it. It
    runs with its site's engine unless it names one (IOR's and mdtest's exercises in
    a fio site, say)."""

    profile = models.ForeignKey(SiteProfile, on_delete=models.CASCADE, related_name="exercises")
    key = models.SlugField(max_length=16)
    order = models.PositiveIntegerField(default=0)
    title = models.CharField(max_length=120)
    goal = models.TextField()
    measures = models.TextField()
    how_to_read = models.TextField()
    questions = models.JSONField(default=list, blank=True)
    pattern = models.CharField(max_length=16, choices=[(p.value, p.value) for p in Pattern])
    block_size = models.PositiveIntegerField(help_text="Bytes per I/O")
    processes = models.PositiveIntegerField()
    size_per_process = models.PositiveBigIntegerField(help_text="Bytes each process writes")
    files_per_process = models.PositiveIntegerField(default=1)
    file_per_process = models.BooleanField(default=True)
    fsync = models.BooleanField(default=True)
    read_back = models.BooleanField(default=False, help_text="Read the data back after writing")
    direct_io = models.BooleanField(
        default=False, help_text="Past the page cache (O_DIRECT), on targets not in memory"
    )
    seconds = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Time-based: write for this long (empty: once through)"
    )
    # What one run of it should show (exercises/lessons.py), e.g.
    # {"faster": "tmp", "slower": "global", "factor": 5, "text": "..."}.
    claims = models.JSONField(default=list, blank=True)
    engine = models.CharField(
        max_length=8, choices=ENGINE_CHOICES, blank=True, help_text="Empty: the site's engine"
    )
    time_limit_minutes = models.PositiveIntegerField(default=10)

    class Meta:
        ordering = ["order", "key"]
        constraints = [
            models.UniqueConstraint(fields=["profile", "key"], name="exercise_key_per_profile")
        ]

    def __str__(self) -> str:
        return f"{self.key}: {self.title}"

    @property
    def workload(self) -> Workload:
        return Workload(
            pattern=Pattern(self.pattern),
            block_size=self.block_size,
            processes=self.processes,
            size_per_process=self.size_per_process,
            files_per_process=self.files_per_process,
            file_per_process=self.file_per_process,
            fsync=self.fsync,
            read_back=self.read_back,
            direct=self.direct_io,
            seconds=self.seconds,
        )

    @property
    def file_size(self) -> int:
        """Bytes in each file a process writes."""
        return self.size_per_process // self.files_per_process

    @property
    def runs_with(self) -> str:
        """The engine its runs use."""
        return self.engine or self.profile.engine

    @property
    def measures_metadata(self) -> bool:
        """Its figures are file operations per second (mdtest), not MiB/s."""
        return get_engine(self.runs_with).metadata

    def clean(self) -> None:
        try:
            # The parameters together, and what the engine makes of them (IOR writes
            # no many small files, mdtest no random offsets).
            get_engine(self.runs_with).command(self.workload, Target(directory="/check"))
        except ValueError as e:
            raise ValidationError(str(e)) from None
        if self.claims and self.profile_id:
            exercises = {e.key for e in self.profile.exercises.all()} | {self.key}
            targets = {t.key for t in self.profile.targets.all()}
            try:
                lessons.parse(self.claims, self.key, exercises, targets)
            except ValueError as e:
                raise ValidationError({"claims": str(e)}) from None


class Metric(models.TextChoices):
    """What a reference figure (and a run's figure) measures: a bandwidth of the data
    written or read, or file operations per second (mdtest)."""

    WRITE = "write", "write bandwidth"
    READ = "read", "read bandwidth"
    CREATE = "create", "file creates per second"
    STAT = "stat", "file stats per second"
    FILE_READ = "file_read", "file reads per second"
    REMOVE = "remove", "file removals per second"


# Where each metric's figure is on a run's result (jobs.models.RunResult).
RESULT_FIELD = {
    Metric.WRITE: "write_bytes_per_s",
    Metric.READ: "read_bytes_per_s",
    Metric.CREATE: "create_ops_s",
    Metric.STAT: "stat_ops_s",
    Metric.FILE_READ: "read_ops_s",
    Metric.REMOVE: "remove_ops_s",
}
BANDWIDTH_METRICS = (Metric.WRITE, Metric.READ)


class Unit(models.TextChoices):
    """The unit a published figure was given in: talks mix MB/s (10^6 bytes) and MiB/s
    (2^20 bytes), a 4.9 % difference that is kept, not guessed away."""

    MIB_S = "MiB/s", "MiB/s"
    MB_S = "MB/s", "MB/s"
    OPS_S = "ops/s", "operations/s"


class ReferenceResult(models.Model):
    """A figure the site (or a talk about it) published for an exercise on a target,
    in the unit it was published in, with where it comes from."""

    exercise = models.ForeignKey(Exercise, on_delete=models.CASCADE, related_name="references")
    target = models.ForeignKey(StorageTarget, on_delete=models.CASCADE, related_name="references")
    metric = models.CharField(max_length=16, choices=Metric.choices, default=Metric.WRITE)
    value = models.FloatField()
    unit = models.CharField(max_length=8, choices=Unit.choices, default=Unit.MIB_S)
    source = models.CharField(max_length=200, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["exercise", "target", "metric"], name="one_reference_per_metric"
            )
        ]

    def __str__(self) -> str:
        what = self.get_metric_display()
        return f"{self.exercise.key} on {self.target}: {what} {self.value} {self.unit}"

    @property
    def mib_s(self) -> float | None:
        """A bandwidth in MiB/s, whatever unit it was published in."""
        if self.unit == Unit.MIB_S:
            return self.value
        if self.unit == Unit.MB_S:
            return self.value * 1e6 / 2**20
        return None


class Calibration(models.Model):
    """A round that runs every exercise on every target of a site `repeat` times and
    keeps what it measured as the site's own references (MeasuredReference)."""

    profile = models.ForeignKey(SiteProfile, on_delete=models.CASCADE, related_name="calibrations")
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    repeat = models.PositiveSmallIntegerField(default=5)
    # What it runs: these exercises on these targets, by key, in this order.
    exercise_keys = models.JSONField(default=list)
    target_keys = models.JSONField(default=list)
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    summary = models.TextField(blank=True)

    class Meta:
        ordering = ["-started_at"]
        # Not an instructor's by default: a round is up to a hundred and more jobs, and
        # its figures become the site's reference on every page.
        permissions = [("run_calibration", "Can calibrate the site")]

    def __str__(self) -> str:
        return f"calibration of {self.profile} ×{self.repeat} at {self.started_at:%Y-%m-%d %H:%M}"


class MeasuredReference(models.Model):
    """The site's measured figure for an exercise on a target: the median of a
    calibration's runs, their spread and when. Bandwidths in MiB/s, file
    operations in ops/s."""

    exercise = models.ForeignKey(Exercise, on_delete=models.CASCADE, related_name="measured")
    target = models.ForeignKey(StorageTarget, on_delete=models.CASCADE, related_name="measured")
    metric = models.CharField(max_length=16, choices=Metric.choices, default=Metric.WRITE)
    calibration = models.ForeignKey(
        Calibration, null=True, blank=True, on_delete=models.SET_NULL, related_name="measured"
    )
    values = models.JSONField(default=list, help_text="Each run's figure")
    # The round's figures that cannot be the target's (exercises/calibration_band.py).
    kept_out = models.JSONField(default=list, blank=True, help_text="Figures kept out")
    median = models.FloatField()
    low = models.FloatField()
    high = models.FloatField()
    measured_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["exercise", "target", "metric"], name="one_measured_per_metric"
            )
        ]

    def __str__(self) -> str:
        return (
            f"{self.exercise.key} on {self.target}: {self.get_metric_display()} {self.median:.3g}"
        )


def new_join_code() -> str:
    # Unambiguous letters and digits, easy to read out in a classroom.
    alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
    return "".join(secrets.choice(alphabet) for _ in range(8))


class Course(models.Model):
    """A storage course: a lab (exercises x targets) that a class runs together."""

    title = models.CharField(max_length=120)
    profile = models.ForeignKey(SiteProfile, on_delete=models.PROTECT, related_name="courses")
    instructors = models.ManyToManyField(
        settings.AUTH_USER_MODEL, related_name="courses_taught", blank=True
    )
    join_code = models.CharField(max_length=16, unique=True, default=new_join_code)
    exercises = models.ManyToManyField(Exercise, related_name="courses")
    targets = models.ManyToManyField(StorageTarget, related_name="courses")
    opens_at = models.DateTimeField(default=timezone.now)
    closes_at = models.DateTimeField(null=True, blank=True)
    max_active_runs = models.PositiveIntegerField(
        default=4, help_text="Runs one trainee may have going at once in this course"
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at"]
        permissions = [("teach_course", "Can create and teach courses")]

    def __str__(self) -> str:
        return self.title

    @property
    def is_open(self) -> bool:
        now = timezone.now()
        return self.opens_at <= now and (self.closes_at is None or now < self.closes_at)


class Enrollment(models.Model):
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="enrollments")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="enrollments"
    )
    joined_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["joined_at"]
        constraints = [
            models.UniqueConstraint(fields=["course", "user"], name="one_enrollment_per_user")
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.course}"


# --- quota: how full each user's directory is on each target -------------------------


class QuotaCollector(models.TextChoices):
    """The tools a site can report usage with (exercises/quota/collectors.py runs them)."""

    LOCAL = "local", "directory usage against the default quota"
    LUSTRE = "lustre", "Lustre: lfs quota"
    BEEGFS7 = "beegfs7", "BeeGFS 7: beegfs-ctl --getquota"
    BEEGFS8 = "beegfs8", "BeeGFS 8: beegfs quota list-usage"
    GPFS = "gpfs", "GPFS / Storage Scale: mmlsquota"
    NFS = "nfs", "NFS and Linux quotas: quota"
    ONDEMAND = "ondemand", "Open OnDemand quota file"


# A mount point, device or device:fileset. It becomes one argument of a command (never
# through a shell); it may not start with '-', so it can never pass as an option.
_QUOTA_FILESYSTEM = re.compile(r"^[A-Za-z0-9_/][A-Za-z0-9_./:@-]*\Z")


def validate_quota_filesystem(value: str) -> None:
    if value and not _QUOTA_FILESYSTEM.match(value):
        raise ValidationError(
            "A mount point or device name of letters, digits and '_', '.', '/', ':', '@', '-', "
            "not starting with '-', e.g. /scratch or gpfs1:projects."
        )


class QuotaSource(models.Model):
    """How a target's usage is collected: which tool, asked about which filesystem.
    Set by the site profile (a [targets.quota] table) or in the admin."""

    target = models.OneToOneField(
        StorageTarget, on_delete=models.CASCADE, related_name="quota_source"
    )
    collector = models.CharField(max_length=16, choices=QuotaCollector.choices)
    filesystem = models.CharField(
        max_length=255,
        blank=True,
        validators=[validate_quota_filesystem],
        help_text="What the tool is asked about: the Lustre or BeeGFS mount point, the GPFS "
        "device (device:fileset), the device or mount point `quota` lists. Empty for local "
        "and ondemand.",
    )

    def __str__(self) -> str:
        return f"{self.target}: {self.get_collector_display()}"


class Quota(models.Model):
    """A cluster account's usage and limits on one target, as last collected. A failed
    collection keeps the last good figures and says why it failed (`error`): what is
    unknown is shown as unknown, never as zero. Limits are None where there is none."""

    account = models.ForeignKey(
        "portal.ClusterAccount", on_delete=models.CASCADE, related_name="quotas"
    )
    target = models.ForeignKey(StorageTarget, on_delete=models.CASCADE, related_name="quotas")
    collector = models.CharField(max_length=16, choices=QuotaCollector.choices)
    bytes_used = models.PositiveBigIntegerField(null=True, blank=True)
    bytes_soft = models.PositiveBigIntegerField(null=True, blank=True)
    bytes_hard = models.PositiveBigIntegerField(null=True, blank=True)
    files_used = models.PositiveBigIntegerField(null=True, blank=True)
    files_soft = models.PositiveBigIntegerField(null=True, blank=True)
    files_hard = models.PositiveBigIntegerField(null=True, blank=True)
    bytes_grace_ends = models.DateTimeField(null=True, blank=True)
    files_grace_ends = models.DateTimeField(null=True, blank=True)
    collected_at = models.DateTimeField(
        null=True, blank=True, help_text="When the figures above were measured"
    )
    attempted_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True, help_text="Why the last collection failed, if it did")

    class Meta:
        ordering = ["target__order", "target__key"]
        constraints = [
            models.UniqueConstraint(fields=["account", "target"], name="one_quota_per_target")
        ]

    def __str__(self) -> str:
        return f"{self.account} on {self.target}"

    @property
    def known(self) -> bool:
        """The figures describe now: collected, and the last attempt worked."""
        return self.bytes_used is not None and self.collected_at is not None and not self.error
