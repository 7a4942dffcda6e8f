# A run's logs under their owner's limits: when they were handed to the reader (none
# while they wait for a place), refusals kept in `missing`, and the few in line.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('jobio', '0003_run_log'),
    ]

    operations = [
        migrations.AddField(
            model_name='runlog',
            name='sent_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AlterField(
            model_name='runlog',
            name='missing',
            field=models.CharField(blank=True, max_length=500),
        ),
        migrations.AddIndex(
            model_name='runlog',
            index=models.Index(condition=models.Q(('missing', ''), ('problem', ''), ('profile__isnull', True)), fields=['received_at'], name='runlog_unread'),
        ),
    ]
