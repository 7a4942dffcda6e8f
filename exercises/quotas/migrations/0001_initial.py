
import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('exercises', '0010_exercise_time_direct_claims'),
        ('catalogue', '0001_initial'),
        ('portal', '0004_cluster_account_last_click'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            # The tables exist (exercises' migrations made them): state only.
            state_operations=[
                migrations.CreateModel(
                    name='Quota',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('collector', models.CharField(choices=[('local', 'directory usage against the default quota'), ('lustre', 'Lustre: lfs quota'), ('beegfs7', 'BeeGFS 7: beegfs-ctl --getquota'), ('beegfs8', 'BeeGFS 8: beegfs quota list-usage'), ('gpfs', 'GPFS / Storage Scale: mmlsquota'), ('nfs', 'NFS and Linux quotas: quota'), ('ondemand', 'Open OnDemand quota file')], max_length=16)),
                        ('bytes_used', models.PositiveBigIntegerField(blank=True, null=True)),
                        ('bytes_soft', models.PositiveBigIntegerField(blank=True, null=True)),
                        ('bytes_hard', models.PositiveBigIntegerField(blank=True, null=True)),
                        ('files_used', models.PositiveBigIntegerField(blank=True, null=True)),
                        ('files_soft', models.PositiveBigIntegerField(blank=True, null=True)),
                        ('files_hard', models.PositiveBigIntegerField(blank=True, null=True)),
                        ('bytes_grace_ends', models.DateTimeField(blank=True, null=True)),
                        ('files_grace_ends', models.DateTimeField(blank=True, null=True)),
                        ('collected_at', models.DateTimeField(blank=True, help_text='When the figures above were measured', null=True)),
                        ('attempted_at', models.DateTimeField(blank=True, null=True)),
                        ('error', models.TextField(blank=True, help_text='Why the last collection failed, if it did')),
                        ('account', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='quotas', to='portal.clusteraccount')),
                        ('target', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='quotas', to='catalogue.storagetarget')),
                    ],
                    options={
                        'db_table': 'exercises_quota',
                        'ordering': ['target__order', 'target__key'],
                        'constraints': [models.UniqueConstraint(fields=('account', 'target'), name='one_quota_per_target')],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
