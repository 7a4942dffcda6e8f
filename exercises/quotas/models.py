"""Quotas: how full each cluster account is on each storage target, as collected."""

from django.conf import settings
from django.db import models

from exercises.catalogue.models import QuotaCollector


class Quota(models.Model):
    """A cluster account's usage and limits on one target, as last collected. A failed
    collection keeps the last good figures and says why it failed (`error`): what is
    unknown is shown as unknown, never as zero. Limits are None where there is none."""

    account = models.ForeignKey(
        "portal.ClusterAccount", on_delete=models.CASCADE, related_name="quotas"
    )
    target = models.ForeignKey(
        "catalogue.StorageTarget", on_delete=models.CASCADE, related_name="quotas"
    )
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
        db_table = "exercises_quota"  # made before the split (migrations)
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


class UsageSample(models.Model):
    """One collected reading of an account's usage on a target, kept for its history
    (exercises/quotas/history.py): at most one an hour, one a day once a week old,
    none beyond QUOTA_HISTORY_DAYS."""

    account = models.ForeignKey(
        "portal.ClusterAccount", on_delete=models.CASCADE, related_name="usage_samples"
    )
    target = models.ForeignKey(
        "catalogue.StorageTarget", on_delete=models.CASCADE, related_name="usage_samples"
    )
    at = models.DateTimeField()
    bytes_used = models.PositiveBigIntegerField()
    files_used = models.PositiveBigIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["at"]
        indexes = [models.Index(fields=["account", "target", "at"], name="usage_sample_series")]

    def __str__(self) -> str:
        return f"{self.account} on {self.target} at {self.at:%Y-%m-%d %H:%M}"


class StorageScan(models.Model):
    """A job run as the account through Slurm on every target it has a directory on
    (scans.py): a scan says what fills each directory and what the purge will take
    (scanner.py); a purge (purge.py, the dev cluster's own) removes what its policy
    says. The job posts its answer once, with the scan's secret (only its hash is kept)."""

    class Kind(models.TextChoices):
        SCAN = "scan", "scan"
        PURGE = "purge", "purge"

    class Status(models.TextChoices):
        SUBMITTED = "submitted", "running"
        DONE = "done", "done"
        FAILED = "failed", "failed"

    account = models.ForeignKey(
        "portal.ClusterAccount", on_delete=models.CASCADE, related_name="storage_scans"
    )
    kind = models.CharField(max_length=8, choices=Kind.choices, default=Kind.SCAN)
    key = models.UUIDField(unique=True)
    token_hash = models.CharField(max_length=64)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.SUBMITTED)
    slurm_job_id = models.PositiveBigIntegerField(null=True, blank=True)
    started_at = models.DateTimeField()
    deadline = models.DateTimeField(null=True, blank=True)  # no answer by then: failed
    ended_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)
    # What the job answered, checked (scans.py: Answer): per target key, its walk.
    found = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-started_at"]
        indexes = [models.Index(fields=["account", "kind", "-started_at"], name="scan_latest")]

    def __str__(self) -> str:
        return f"{self.kind} of {self.account} at {self.started_at:%Y-%m-%d %H:%M}"


class StorageNotice(models.Model):
    """A line a user's storage crossed (a target filling within 7 days, files due for
    purge within 3), kept while it stays crossed: its e-mail goes once per crossing
    (notices.py). Gone once the line is no longer crossed, so the next crossing tells."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="storage_notices"
    )
    line = models.CharField(max_length=200)  # "fills:$SCRATCH:space", "purge:$SCRATCH"
    crossed_at = models.DateTimeField()
    mailed = models.BooleanField(default=False)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "line"], name="one_notice_per_line")]

    def __str__(self) -> str:
        return f"{self.line} for {self.user}"
