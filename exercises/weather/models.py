"""A reading of the filesystem's weather: one canary run's figure on one target,
beside the target's usual one (canaries.py starts them, readings.py reads them)."""

from django.db import models
from django.utils import timezone


class Kind(models.TextChoices):
    """What a canary measures: a short streaming write (MiB/s), or file creates per
    second (metadata)."""

    STREAMING = "streaming", "streaming write"
    METADATA = "metadata", "file creates"


class Reading(models.Model):
    """A canary's figure on a target and its target's usual figure (the calibration's
    median of the same exercise there), made once its run has ended. While the run
    goes, figure and problem are both empty; a run that gave no figure says why."""

    target = models.ForeignKey(
        "catalogue.StorageTarget", on_delete=models.CASCADE, related_name="readings"
    )
    kind = models.CharField(max_length=16, choices=Kind.choices)
    # The exercise whose workload the canary ran (bounded: canaries.py), and its run.
    exercise = models.ForeignKey(
        "catalogue.Exercise", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    run = models.OneToOneField(
        "jobs.BenchmarkRun", on_delete=models.CASCADE, related_name="weather_reading"
    )
    # When it was started; once it ran, when Slurm started its job.
    taken_at = models.DateTimeField(default=timezone.now)
    figure = models.FloatField(null=True, blank=True)  # MiB/s, or files created per second
    usual = models.FloatField(null=True, blank=True)  # the same, as calibrated; None: none yet
    # Trainees' runs were going on the target while the canary ran.
    during_class = models.BooleanField(default=False)
    problem = models.TextField(blank=True)  # why the run gave no figure

    class Meta:
        ordering = ["-taken_at"]
        indexes = [
            models.Index(fields=["target", "kind", "-taken_at"]),
            models.Index(fields=["taken_at"]),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} on {self.target_id} at {self.taken_at:%Y-%m-%d %H:%M}"

    @property
    def ratio(self) -> float | None:
        """The figure over the usual one (1.0: as usual); None without either."""
        if self.figure is None or not self.usual:
            return None
        return self.figure / self.usual

    @property
    def settled(self) -> bool:
        return self.figure is not None or bool(self.problem)
