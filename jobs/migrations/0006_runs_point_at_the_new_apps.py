# A run's foreign keys now name the models in their new apps: the same tables, so the
# database is not touched.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('calibration', '0001_initial'),
        ('catalogue', '0001_initial'),
        ('courses', '0001_initial'),
        ('jobs', '0005_run_ingest_attempts'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            # The tables exist (exercises' migrations made them): state only.
            state_operations=[
                migrations.AlterField(
                    model_name='benchmarkrun',
                    name='calibration',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='runs', to='calibration.calibration'),
                ),
                migrations.AlterField(
                    model_name='benchmarkrun',
                    name='course',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='runs', to='courses.course'),
                ),
                migrations.AlterField(
                    model_name='benchmarkrun',
                    name='exercise',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='runs', to='catalogue.exercise'),
                ),
                migrations.AlterField(
                    model_name='benchmarkrun',
                    name='target',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, to='catalogue.storagetarget'),
                ),
            ],
            database_operations=[],
        ),
    ]
