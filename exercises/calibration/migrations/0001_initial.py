
import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('exercises', '0010_exercise_time_direct_claims'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            # The tables exist (exercises' migrations made them): state only.
            state_operations=[
                migrations.CreateModel(
                    name='Calibration',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('repeat', models.PositiveSmallIntegerField(default=5)),
                        ('exercise_keys', models.JSONField(default=list)),
                        ('target_keys', models.JSONField(default=list)),
                        ('started_at', models.DateTimeField(default=django.utils.timezone.now)),
                        ('finished_at', models.DateTimeField(blank=True, null=True)),
                        ('summary', models.TextField(blank=True)),
                    ],
                    options={
                        'db_table': 'exercises_calibration',
                        'ordering': ['-started_at'],
                        'permissions': [('run_calibration', 'Can calibrate the site')],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
