"""A trainee's prediction of an exercise: made before their first run of it, kept
as it was once a run has started."""

from django.conf import settings
from django.db import models
from django.utils import timezone


class Prediction(models.Model):
    """How a trainee expects the targets to rank in an exercise, fastest first."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="predictions"
    )
    exercise = models.ForeignKey(
        "catalogue.Exercise", on_delete=models.CASCADE, related_name="predictions"
    )
    order = models.JSONField(help_text="Target keys, the fastest first")
    # Optional: the MiB/s the trainee expects of a target, by its key (forms.GUESSES).
    figures = models.JSONField(default=dict, blank=True, help_text="MiB/s guessed per target")
    # Optional: against another exercise on a target (versus.py), "8a/work" -> "faster".
    against = models.JSONField(
        default=dict, blank=True, help_text="Faster, same or slower than another exercise"
    )
    made_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "exercise"], name="one_prediction_per_exercise")
        ]

    def __str__(self) -> str:
        return f"{self.user} on {self.exercise}: {' > '.join(self.order)}"
