import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

METRICS = [
    ("write", "write bandwidth"),
    ("read", "read bandwidth"),
    ("create", "file creates per second"),
    ("stat", "file stats per second"),
    ("file_read", "file reads per second"),
    ("remove", "file removals per second"),
]


class Migration(migrations.Migration):
    dependencies = [
        ("exercises", "0006_exercise_engine_read_back"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        # A published figure keeps its unit and says what it measures; the
        # existing ones are write bandwidths in MiB/s.
        migrations.RemoveConstraint(model_name="referenceresult", name="one_reference_per_pair"),
        migrations.RenameField(model_name="referenceresult", old_name="write_mib_s", new_name="value"),
        migrations.AddField(
            model_name="referenceresult",
            name="metric",
            field=models.CharField(choices=METRICS, default="write", max_length=16),
        ),
        migrations.AddField(
            model_name="referenceresult",
            name="unit",
            field=models.CharField(
                choices=[("MiB/s", "MiB/s"), ("MB/s", "MB/s"), ("ops/s", "operations/s")],
                default="MiB/s",
                max_length=8,
            ),
        ),
        migrations.AddConstraint(
            model_name="referenceresult",
            constraint=models.UniqueConstraint(
                fields=("exercise", "target", "metric"), name="one_reference_per_metric"
            ),
        ),
        migrations.CreateModel(
            name="Calibration",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("repeat", models.PositiveSmallIntegerField(default=5)),
                ("started_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
                ("summary", models.TextField(blank=True)),
                (
                    "profile",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="calibrations",
                        to="exercises.siteprofile",
                    ),
                ),
                (
                    "started_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={"ordering": ["-started_at"]},
        ),
        migrations.CreateModel(
            name="MeasuredReference",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("metric", models.CharField(choices=METRICS, default="write", max_length=16)),
                ("values", models.JSONField(default=list, help_text="Each run's figure")),
                ("median", models.FloatField()),
                ("low", models.FloatField()),
                ("high", models.FloatField()),
                ("measured_at", models.DateTimeField(default=django.utils.timezone.now)),
                (
                    "calibration",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="measured",
                        to="exercises.calibration",
                    ),
                ),
                (
                    "exercise",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="measured",
                        to="exercises.exercise",
                    ),
                ),
                (
                    "target",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="measured",
                        to="exercises.storagetarget",
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(
                        fields=("exercise", "target", "metric"), name="one_measured_per_metric"
                    )
                ]
            },
        ),
    ]
