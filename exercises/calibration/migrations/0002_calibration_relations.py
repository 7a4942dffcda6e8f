
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('calibration', '0001_initial'),
        ('catalogue', '0001_initial'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            # The tables exist (exercises' migrations made them): state only.
            state_operations=[
                migrations.AddField(
                    model_name='calibration',
                    name='profile',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='calibrations', to='catalogue.siteprofile'),
                ),
                migrations.AddField(
                    model_name='calibration',
                    name='started_by',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to=settings.AUTH_USER_MODEL),
                ),
            ],
            database_operations=[],
        ),
    ]
