from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("jobs", "0004_run_waiting_calibration"),
    ]

    operations = [
        migrations.AddField(
            model_name="benchmarkrun",
            name="ingest_attempts",
            field=models.PositiveSmallIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="benchmarkrun",
            name="ingest_sent_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
