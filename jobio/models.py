import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone


class CheckSource(models.TextChoices):
    UPLOAD = "upload", "Uploaded log"
    LOG_DIR = "log_dir", "The site's Darshan logs"


class JobCheck(models.Model):
    """A user's job, checked from its Darshan log. The log's bytes wait here for the
    task that reads them (jobio/tasks.py), which keeps only the profile and drops the
    bytes; a log that cannot be read leaves no check behind (jobio/checks.py: fail)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="job_checks"
    )
    created_at = models.DateTimeField(default=timezone.now)
    source = models.CharField(max_length=8, choices=CheckSource.choices)
    # Shown to its owner only, escaped; never used as a path.
    label = models.CharField(max_length=120)
    # LOG_DIR: the UID the log must have been written by (the user's cluster account).
    expected_uid = models.PositiveIntegerField(null=True, blank=True)
    log = models.BinaryField(null=True, blank=True, editable=False)
    profile = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.user} · {self.label}"

    @property
    def reading(self) -> bool:
        return self.profile is None
