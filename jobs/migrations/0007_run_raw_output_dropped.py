# Retention (jobs/retention.py): when a run's raw output was dropped, and the outputs
# still kept, by when they came.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('jobs', '0006_runs_point_at_the_new_apps'),
    ]

    operations = [
        migrations.AddField(
            model_name='benchmarkrun',
            name='raw_output_dropped_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddIndex(
            model_name='benchmarkrun',
            index=models.Index(condition=models.Q(('raw_output_dropped_at__isnull', True), ('result_received_at__isnull', False)), fields=['result_received_at'], name='run_output_kept'),
        ),
    ]
