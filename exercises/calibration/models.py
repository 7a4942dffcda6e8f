"""A calibration round: the site's own references, measured (rounds.py runs it)."""

from django.conf import settings
from django.db import models
from django.utils import timezone


class Calibration(models.Model):
    """A round that runs every exercise on every target of a site `repeat` times and
    keeps what it measured as the site's own references (MeasuredReference)."""

    profile = models.ForeignKey(
        "catalogue.SiteProfile", on_delete=models.CASCADE, related_name="calibrations"
    )
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    repeat = models.PositiveSmallIntegerField(default=5)
    # What it runs: these exercises on these targets, by key, in this order.
    exercise_keys = models.JSONField(default=list)
    target_keys = models.JSONField(default=list)
    # The exercises of the round that follows it, started as it ends (rounds.py): a
    # site's first exercises measured first, the rest after them (make demo).
    then_exercise_keys = models.JSONField(default=list, blank=True)
    then_repeat = models.PositiveSmallIntegerField(null=True, blank=True)  # None: its own
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    summary = models.TextField(blank=True)

    class Meta:
        db_table = "exercises_calibration"  # made before the split (migrations)
        ordering = ["-started_at"]
        # Not an instructor's by default: a round is up to a hundred and more jobs, and
        # its figures become the site's reference on every page.
        permissions = [("run_calibration", "Can calibrate the site")]

    def __str__(self) -> str:
        return f"calibration of {self.profile} ×{self.repeat} at {self.started_at:%Y-%m-%d %H:%M}"
