"""A course: a lab a class runs together, its instructors and who joined it."""

import secrets

from django.conf import settings
from django.db import models
from django.utils import timezone


def new_join_code() -> str:
    # Unambiguous letters and digits, easy to read out in a classroom.
    alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
    return "".join(secrets.choice(alphabet) for _ in range(8))


class Course(models.Model):
    """A storage course: a lab (exercises x targets) that a class runs together."""

    title = models.CharField(max_length=120)
    profile = models.ForeignKey(
        "catalogue.SiteProfile", on_delete=models.PROTECT, related_name="courses"
    )
    instructors = models.ManyToManyField(
        settings.AUTH_USER_MODEL, related_name="courses_taught", blank=True
    )
    join_code = models.CharField(max_length=16, unique=True, default=new_join_code)
    exercises = models.ManyToManyField("catalogue.Exercise", related_name="courses")
    targets = models.ManyToManyField("catalogue.StorageTarget", related_name="courses")
    opens_at = models.DateTimeField(default=timezone.now)
    closes_at = models.DateTimeField(null=True, blank=True)
    max_active_runs = models.PositiveIntegerField(
        default=4, help_text="Runs one trainee may have going at once in this course"
    )
    # Trainees rank an exercise's targets before their first run of it (predictions/).
    predictions_required = models.BooleanField(
        default=False, help_text="Each trainee predicts before their first run of an exercise"
    )
    created_at = models.DateTimeField(default=timezone.now)
    # Any change of the course itself (an edit, closed, opened, a new code): an open
    # overview then reloads, as its columns or buttons may have changed.
    changed_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "exercises_course"  # made before the split (migrations)
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
        db_table = "exercises_enrollment"  # made before the split (migrations)
        ordering = ["joined_at"]
        constraints = [
            models.UniqueConstraint(fields=["course", "user"], name="one_enrollment_per_user")
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.course}"
