
import django.core.validators
import django.db.models.deletion
import django.utils.timezone
import exercises.catalogue.models
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('exercises', '0010_exercise_time_direct_claims'),
        ('calibration', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            # The tables exist (exercises' migrations made them): state only.
            state_operations=[
                migrations.CreateModel(
                    name='SiteProfile',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('name', models.SlugField(max_length=32, unique=True)),
                        ('title', models.CharField(max_length=120)),
                        ('description', models.TextField(blank=True)),
                        ('engine', models.CharField(choices=[('fio', 'fio'), ('ior', 'IOR'), ('mdtest', 'mdtest')], default='fio', max_length=8)),
                        ('node_memory_gib', models.PositiveIntegerField(default=64, help_text='Memory of a typical compute node')),
                    ],
                    options={
                        'db_table': 'exercises_siteprofile',
                    },
                ),
                migrations.CreateModel(
                    name='Exercise',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('key', models.SlugField(max_length=16)),
                        ('order', models.PositiveIntegerField(default=0)),
                        ('title', models.CharField(max_length=120)),
                        ('goal', models.TextField()),
                        ('measures', models.TextField()),
                        ('how_to_read', models.TextField()),
                        ('questions', models.JSONField(blank=True, default=list)),
                        ('pattern', models.CharField(choices=[('sequential', 'sequential'), ('random', 'random')], max_length=16)),
                        ('block_size', models.PositiveIntegerField(help_text='Bytes per I/O')),
                        ('processes', models.PositiveIntegerField()),
                        ('size_per_process', models.PositiveBigIntegerField(help_text='Bytes each process writes')),
                        ('files_per_process', models.PositiveIntegerField(default=1)),
                        ('file_per_process', models.BooleanField(default=True)),
                        ('fsync', models.BooleanField(default=True)),
                        ('read_back', models.BooleanField(default=False, help_text='Read the data back after writing')),
                        ('direct_io', models.BooleanField(default=False, help_text='Past the page cache (O_DIRECT), on targets not in memory')),
                        ('seconds', models.PositiveSmallIntegerField(blank=True, help_text='Time-based: write for this long (empty: once through)', null=True)),
                        ('claims', models.JSONField(blank=True, default=list)),
                        ('engine', models.CharField(blank=True, choices=[('fio', 'fio'), ('ior', 'IOR'), ('mdtest', 'mdtest')], help_text="Empty: the site's engine", max_length=8)),
                        ('time_limit_minutes', models.PositiveIntegerField(default=10)),
                        ('profile', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='exercises', to='catalogue.siteprofile')),
                    ],
                    options={
                        'db_table': 'exercises_exercise',
                        'ordering': ['order', 'key'],
                    },
                ),
                migrations.CreateModel(
                    name='StorageTarget',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('key', models.SlugField(max_length=32)),
                        ('name', models.CharField(help_text='As users know it, e.g. $GLOBAL', max_length=32, validators=[django.core.validators.RegexValidator('^[A-Za-z0-9$_][A-Za-z0-9$_ .+/-]*\\Z', "A target name is letters, digits, spaces and $ _ . + / - (not first: space, '-', '.', '+' or '/'), e.g. $GLOBAL or BeeGFS fast.")])),
                        ('order', models.PositiveIntegerField(default=0)),
                        ('filesystem', models.CharField(help_text='e.g. NFS, GPFS, BeeGFS, tmpfs', max_length=64)),
                        ('path_template', models.CharField(help_text="The user's own directory on it, e.g. /scratch/{user}", max_length=255, validators=[exercises.catalogue.models.validate_path_template])),
                        ('in_memory', models.BooleanField(default=False, help_text='tmpfs and the like: no O_DIRECT, space comes from RAM')),
                        ('persistent', models.BooleanField(default=True, help_text='Data outlives the job')),
                        ('shared', models.BooleanField(default=True, help_text='Every node sees the same data')),
                        ('summary', models.TextField(blank=True)),
                        ('size', models.CharField(blank=True, max_length=120)),
                        ('default_quota', models.CharField(blank=True, max_length=120)),
                        ('quota_bytes', models.PositiveBigIntegerField(blank=True, null=True)),
                        ('peak_speed', models.CharField(blank=True, max_length=120)),
                        ('redundancy', models.CharField(blank=True, max_length=200)),
                        ('hardware', models.TextField(blank=True)),
                        ('purge_policy', models.CharField(blank=True, max_length=200)),
                        ('use_for', models.JSONField(blank=True, default=list)),
                        ('avoid_for', models.JSONField(blank=True, default=list)),
                        ('profile', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='targets', to='catalogue.siteprofile')),
                    ],
                    options={
                        'db_table': 'exercises_storagetarget',
                        'ordering': ['order', 'key'],
                    },
                ),
                migrations.CreateModel(
                    name='ReferenceResult',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('metric', models.CharField(choices=[('write', 'write bandwidth'), ('read', 'read bandwidth'), ('create', 'file creates per second'), ('stat', 'file stats per second'), ('file_read', 'file reads per second'), ('remove', 'file removals per second')], default='write', max_length=16)),
                        ('value', models.FloatField()),
                        ('unit', models.CharField(choices=[('MiB/s', 'MiB/s'), ('MB/s', 'MB/s'), ('ops/s', 'operations/s')], default='MiB/s', max_length=8)),
                        ('source', models.CharField(blank=True, max_length=200)),
                        ('exercise', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='references', to='catalogue.exercise')),
                        ('target', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='references', to='catalogue.storagetarget')),
                    ],
                    options={
                        'db_table': 'exercises_referenceresult',
                    },
                ),
                migrations.CreateModel(
                    name='QuotaSource',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('collector', models.CharField(choices=[('local', 'directory usage against the default quota'), ('lustre', 'Lustre: lfs quota'), ('beegfs7', 'BeeGFS 7: beegfs-ctl --getquota'), ('beegfs8', 'BeeGFS 8: beegfs quota list-usage'), ('gpfs', 'GPFS / Storage Scale: mmlsquota'), ('nfs', 'NFS and Linux quotas: quota'), ('ondemand', 'Open OnDemand quota file')], max_length=16)),
                        ('filesystem', models.CharField(blank=True, help_text='What the tool is asked about: the Lustre or BeeGFS mount point, the GPFS device (device:fileset), the device or mount point `quota` lists. Empty for local and ondemand.', max_length=255, validators=[exercises.catalogue.models.validate_quota_filesystem])),
                        ('target', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='quota_source', to='catalogue.storagetarget')),
                    ],
                    options={
                        'db_table': 'exercises_quotasource',
                    },
                ),
                migrations.CreateModel(
                    name='MeasuredReference',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('metric', models.CharField(choices=[('write', 'write bandwidth'), ('read', 'read bandwidth'), ('create', 'file creates per second'), ('stat', 'file stats per second'), ('file_read', 'file reads per second'), ('remove', 'file removals per second')], default='write', max_length=16)),
                        ('values', models.JSONField(default=list, help_text="Each run's figure")),
                        ('kept_out', models.JSONField(blank=True, default=list, help_text='Figures kept out')),
                        ('median', models.FloatField()),
                        ('low', models.FloatField()),
                        ('high', models.FloatField()),
                        ('measured_at', models.DateTimeField(default=django.utils.timezone.now)),
                        ('calibration', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='measured', to='calibration.calibration')),
                        ('exercise', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='measured', to='catalogue.exercise')),
                        ('target', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='measured', to='catalogue.storagetarget')),
                    ],
                    options={
                        'db_table': 'exercises_measuredreference',
                    },
                ),
                migrations.AddConstraint(
                    model_name='exercise',
                    constraint=models.UniqueConstraint(fields=('profile', 'key'), name='exercise_key_per_profile'),
                ),
                migrations.AddConstraint(
                    model_name='storagetarget',
                    constraint=models.UniqueConstraint(fields=('profile', 'key'), name='target_key_per_profile'),
                ),
                migrations.AddConstraint(
                    model_name='referenceresult',
                    constraint=models.UniqueConstraint(fields=('exercise', 'target', 'metric'), name='one_reference_per_metric'),
                ),
                migrations.AddConstraint(
                    model_name='measuredreference',
                    constraint=models.UniqueConstraint(fields=('exercise', 'target', 'metric'), name='one_measured_per_metric'),
                ),
            ],
            database_operations=[],
        ),
    ]
