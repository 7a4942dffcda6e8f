# Retention (jobs/retention.py): when a run's logs were dropped (the profile stays),
# and the logs still kept, by when they came.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('jobio', '0004_run_log_limits'),
    ]

    operations = [
        migrations.AddField(
            model_name='runlog',
            name='logs_dropped_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddIndex(
            model_name='runlog',
            index=models.Index(condition=models.Q(('logs_dropped_at__isnull', True), ('missing', '')), fields=['received_at'], name='runlog_logs_kept'),
        ),
    ]
