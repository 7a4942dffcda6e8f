"""The site's catalogue: its storage targets, the exercises run on them, the figures
published and measured for them, and where each target's quota is read from. A site
profile (exercises/catalogue/sites/NAME.toml) fills these (profiles.py); staff may
correct them in the admin."""

import re

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models
from django.utils import timezone

from exercises.catalogue import findings, lessons, outcomes
from jobs.engines import ENGINE_CHOICES, Pattern, Target, Workload, get_engine
from jobs.figures import RATE_FIELDS
from jobs.places import variable_of
from portal.models import cluster_username_validator
from portal.units import MB, mib

# Absolute, plain path characters, and the cluster user name in place of {user}.
_PATH_TEMPLATE = re.compile(r"^/[A-Za-z0-9_./-]*\{user\}[A-Za-z0-9_./-]*\Z")


def validate_path_template(value: str) -> None:
    """A path with {user} once, or a directory a variable names on the job's node
    (jobs/places.py), with {user} at most once below it."""
    if _PATH_TEMPLATE.match(value) and ".." not in value and value.count("{user}") == 1:
        return
    if value.count("{user}") <= 1 and variable_of(value.replace("{user}", "u")):
        return
    raise ValidationError(
        "An absolute path of letters, digits, '_', '.', '-' and '/', with {user} once "
        "where the cluster account name goes, e.g. /scratch/{user}; or a variable the "
        "job sees on its node, e.g. $TMPDIR (resolved when the job runs)."
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
    # What compression algorithms did to the site's own data, as it (or a talk)
    # published them, shown beside the exercises whose data compresses: each
    # {algorithm, ratio, compress_mb_s, decompress_mb_s, source}, checked by the
    # profile's loader (profiles.py: Compression).
    compression = models.JSONField(default=list, blank=True)

    class Meta:
        db_table = "exercises_siteprofile"  # made before the split (migrations)

    def __str__(self) -> str:
        return self.title


# A purge's exempt pattern: one both the preview (Python's fnmatch) and a purge (find
# -path) read alike, that a job script can name as a plain word (no quote, space or
# bracket), below the user's directory.
PURGE_EXEMPT_PATTERN = re.compile(r"[A-Za-z0-9._*?/-]{1,200}")
PURGE_EXEMPT_MAX = 20


def validate_purge_exempt(value: object) -> None:
    if not isinstance(value, list) or len(value) > PURGE_EXEMPT_MAX:
        raise ValidationError(f"exempt must be a list of at most {PURGE_EXEMPT_MAX} patterns")
    for pattern in value:
        if not isinstance(pattern, str) or not PURGE_EXEMPT_PATTERN.fullmatch(pattern):
            raise ValidationError(
                f"exempt pattern {pattern!r} may hold letters, digits and . _ * ? / - only"
            )
        if pattern.startswith("/") or ".." in pattern.split("/"):
            raise ValidationError(f"exempt pattern {pattern!r} must be below the user's directory")


class PurgeBy(models.TextChoices):
    """Which of a file's times a purge reads: when it was last read, or last written."""

    ACCESS = "access", "not accessed"
    MODIFY = "modify", "not modified"


class StoredBy(models.TextChoices):
    """How a run's job finds the bytes its files took on the target (job_script.sh)."""

    # The blocks the files hold (du): what ZFS gives, compressed.
    DU = "du", "du: the blocks its files hold (ZFS)"
    # btrfs counts files as written (du), and what it stored in a subvolume's quota
    # group: the run's directory is a subvolume of its own, read through sysfs.
    BTRFS = "btrfs", "btrfs: the run's own subvolume and its quota group"


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
        help_text="The user's own directory on it, e.g. /scratch/{user}, or the variable "
        "that names it on a job's node, e.g. $TMPDIR",
    )
    # Where the user's new files are spread over all the target's servers: a Lustre
    # directory set once with `lfs setstripe -c -1`, a BeeGFS one with beegfs-ctl's
    # --setpattern, a sharded GlusterFS volume. The exercises that compare layouts
    # (Exercise.spread) run there; blank: the target lays files out one way only.
    spread_path_template = models.CharField(
        max_length=255,
        blank=True,
        validators=[validate_path_template],
        help_text="The user's directory where each new file is spread over all the "
        "target's servers (striped), e.g. /lustre/wide/{user}; blank if it has none",
    )
    in_memory = models.BooleanField(
        default=False, help_text="tmpfs and the like: no O_DIRECT, space comes from RAM"
    )
    # A filesystem that compresses what it stores (ZFS with lz4, btrfs with zstd), and
    # how a run finds how much of what it wrote was stored (StoredBy): the compression
    # exercises show the space beside the speed where it is measured.
    compression = models.CharField(
        max_length=120, blank=True, help_text="What it compresses with, e.g. zstd; blank: none"
    )
    stored_by = models.CharField(
        max_length=8,
        choices=StoredBy.choices,
        blank=True,
        help_text="How a run measures the space its files took (blank: not measured)",
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
    # The purge as data (a profile's [targets.purge] table, exercises/catalogue/purges.py):
    # files not accessed (or not modified) for purge_days days are removed; purge_exempt's
    # patterns (paths below the user's directory) never are. None: no purge by age.
    purge_days = models.PositiveSmallIntegerField(
        null=True, blank=True, validators=[MinValueValidator(1), MaxValueValidator(3650)]
    )
    purge_by = models.CharField(max_length=8, choices=PurgeBy.choices, default=PurgeBy.ACCESS)
    purge_exempt = models.JSONField(default=list, blank=True, validators=[validate_purge_exempt])
    use_for = models.JSONField(default=list, blank=True)
    avoid_for = models.JSONField(default=list, blank=True)

    class Meta:
        db_table = "exercises_storagetarget"  # made before the split (migrations)
        ordering = ["order", "key"]
        constraints = [
            models.UniqueConstraint(fields=["profile", "key"], name="target_key_per_profile")
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        if self.stored_by and not self.compression:
            raise ValidationError(
                {
                    "stored_by": "say what it compresses with (compression): else there is "
                    "nothing to measure"
                }
            )

    def directory_for(self, cluster_username: str, spread: bool = False) -> str:
        """The user's directory on it; for a target a variable names, as the job script
        resolves it on the node ("$TMPDIR", "$WORK/ada"). `spread`: the one where new
        files are spread over the target's servers, where it has one."""
        template = self.spread_path_template if spread and self.spread_path_template else None
        template = template or self.path_template
        validate_path_template(template)
        cluster_username_validator(cluster_username)
        return template.replace("{user}", cluster_username)

    @property
    def spread_directory(self) -> str:
        """Its spread directory as pages and advice name it for anyone
        ("/gluster-wide/USER"), or "" if it has none."""
        return self.spread_path_template.replace("{user}", "USER")

    @property
    def purge_rule(self) -> str:
        """'files not accessed for 14 days are removed', or '' without a purge by age."""
        if self.purge_days is None:
            return ""
        days = f"{self.purge_days} day{'s' if self.purge_days != 1 else ''}"
        return f"files {PurgeBy(self.purge_by).label} for {days} are removed"

    @property
    def variable(self) -> str | None:
        """The environment variable that names it on a job's node, if one does."""
        return variable_of(self.path_template.replace("{user}", "u"))


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
    mpi_io = models.BooleanField(default=False, help_text="MPI-IO calls instead of POSIX (IOR)")
    collective = models.BooleanField(
        default=False, help_text="Collective MPI-IO calls: collective buffering (IOR)"
    )
    segments = models.PositiveIntegerField(
        default=1, help_text="Each process writes its share in this many interleaved pieces (IOR)"
    )
    nodes = models.PositiveSmallIntegerField(
        default=1, help_text="Nodes the processes spread over, on a target every node sees"
    )
    spread = models.BooleanField(
        default=False,
        help_text="Runs where the target spreads each file over all its servers (its "
        "spread_path_template); on a target without one, where its other runs go",
    )
    compressible = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        validators=[MaxValueValidator(95)],
        help_text="Percent of its data that compresses away (0: random bytes; empty: the "
        "engine's own data)",
    )
    block_sizes = models.JSONField(
        default=list,
        blank=True,
        help_text="A sweep: request sizes in bytes, smallest first, each written for `seconds` "
        "(the largest is block_size)",
    )
    # What one run of it should show (exercises/catalogue/lessons.py), e.g.
    # {"faster": "tmp", "slower": "global", "factor": 5, "text": "..."}.
    claims = models.JSONField(default=list, blank=True)
    # What its figures say, in words chosen from them when a page is drawn
    # (exercises/catalogue/findings.py), e.g. {"side": "tmp", "against": "8a/tmp",
    # "higher": "...", "alike": "...", "lower": "..."}.
    findings = models.JSONField(default=list, blank=True)
    engine = models.CharField(
        max_length=8, choices=ENGINE_CHOICES, blank=True, help_text="Empty: the site's engine"
    )
    time_limit_minutes = models.PositiveIntegerField(default=10)

    class Meta:
        db_table = "exercises_exercise"  # made before the split (migrations)
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
            mpi_io=self.mpi_io,
            collective=self.collective,
            segments=self.segments,
            nodes=self.nodes,
            block_sizes=tuple(self.block_sizes or ()),
            compressible=self.compressible,
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
        if (self.claims or self.findings) and self.profile_id:
            sweeps = {e.key: e.block_sizes for e in self.profile.exercises.all()}
            sweeps[self.key] = self.block_sizes
            targets = {t.key for t in self.profile.targets.all()}
            for field, parse in (("claims", lessons.parse), ("findings", findings.parse)):
                try:
                    parse(getattr(self, field), self.key, set(sweeps), targets, sweeps)
                except ValueError as e:
                    raise ValidationError({field: str(e)}) from None
        # Its prose states no outcome that neither a claim nor a finding holds.
        prose = {field: getattr(self, field) for field in outcomes.EXERCISE_PROSE}
        held = [c.get("text", "") for c in self.claims if isinstance(c, dict)]
        held += [
            f.get(way, "") for f in self.findings if isinstance(f, dict) for way in findings.WAYS
        ]
        if unheld := outcomes.unheld({"exercises": [{"key": self.key, **prose}]}, held):
            raise ValidationError(str(unheld[0]))


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
# mdtest's file phases, in the order of jobs.engines.base.RATE_FIELDS (pages show them so).
RATE_METRICS = tuple(
    next(m for m, name in RESULT_FIELD.items() if name == field) for field in RATE_FIELDS
)


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
        db_table = "exercises_referenceresult"  # made before the split (migrations)
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
            return mib(self.value * MB)
        return None


class MeasuredReference(models.Model):
    """The site's measured figure for an exercise on a target: the median of a
    calibration's runs, their spread and when. Bandwidths in MiB/s, file
    operations in ops/s."""

    exercise = models.ForeignKey(Exercise, on_delete=models.CASCADE, related_name="measured")
    target = models.ForeignKey(StorageTarget, on_delete=models.CASCADE, related_name="measured")
    metric = models.CharField(max_length=16, choices=Metric.choices, default=Metric.WRITE)
    calibration = models.ForeignKey(
        "calibration.Calibration",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="measured",
    )
    values = models.JSONField(default=list, help_text="Each run's figure")
    # The round's figures that cannot be the target's (exercises/calibration/band.py).
    kept_out = models.JSONField(default=list, blank=True, help_text="Figures kept out")
    median = models.FloatField()
    low = models.FloatField()
    high = models.FloatField()
    measured_at = models.DateTimeField(default=timezone.now)
    # A sweep's write figure at each request size, as its runs measured them: the
    # median at each size, bytes (as text, JSON's keys) -> MiB/s. Empty: no sweep.
    by_size = models.JSONField(default=dict, blank=True)
    # On a target that compresses: the medians of what the runs' files held and what
    # was stored for them, bytes ({"held": ..., "stored": ...}). Empty: not measured.
    space = models.JSONField(default=dict, blank=True)

    class Meta:
        db_table = "exercises_measuredreference"  # made before the split (migrations)
        constraints = [
            models.UniqueConstraint(
                fields=["exercise", "target", "metric"], name="one_measured_per_metric"
            )
        ]

    def __str__(self) -> str:
        return (
            f"{self.exercise.key} on {self.target}: {self.get_metric_display()} {self.median:.3g}"
        )

    @property
    def sizes(self) -> dict[int, float]:
        """by_size with its keys as numbers: request bytes -> median MiB/s."""
        return {int(size): value for size, value in (self.by_size or {}).items()}


class QuotaCollector(models.TextChoices):
    """The tools a site can report usage with (exercises/quotas/collectors.py runs them)."""

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

    class Meta:
        db_table = "exercises_quotasource"  # made before the split (migrations)

    def __str__(self) -> str:
        return f"{self.target}: {self.get_collector_display()}"

    def clean(self) -> None:
        # A directory a job's node names (a per-job $TMPDIR) is nowhere to be counted.
        if self.collector == QuotaCollector.LOCAL and self.target.variable:
            raise ValidationError(
                {
                    "collector": f"{self.target.path_template} is known on a job's node only: "
                    "there is no directory here to count."
                }
            )
