
import django.db.models.deletion
import django.utils.timezone
import exercises.courses.models
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('exercises', '0010_exercise_time_direct_claims'),
        ('catalogue', '0001_initial'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            # The tables exist (exercises' migrations made them): state only.
            state_operations=[
                migrations.CreateModel(
                    name='Course',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('title', models.CharField(max_length=120)),
                        ('join_code', models.CharField(default=exercises.courses.models.new_join_code, max_length=16, unique=True)),
                        ('opens_at', models.DateTimeField(default=django.utils.timezone.now)),
                        ('closes_at', models.DateTimeField(blank=True, null=True)),
                        ('max_active_runs', models.PositiveIntegerField(default=4, help_text='Runs one trainee may have going at once in this course')),
                        ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                        ('exercises', models.ManyToManyField(related_name='courses', to='catalogue.exercise')),
                        ('instructors', models.ManyToManyField(blank=True, related_name='courses_taught', to=settings.AUTH_USER_MODEL)),
                        ('profile', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='courses', to='catalogue.siteprofile')),
                        ('targets', models.ManyToManyField(related_name='courses', to='catalogue.storagetarget')),
                    ],
                    options={
                        'db_table': 'exercises_course',
                        'ordering': ['-created_at'],
                        'permissions': [('teach_course', 'Can create and teach courses')],
                    },
                ),
                migrations.CreateModel(
                    name='Enrollment',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('joined_at', models.DateTimeField(default=django.utils.timezone.now)),
                        ('course', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='enrollments', to='courses.course')),
                        ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='enrollments', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'exercises_enrollment',
                        'ordering': ['joined_at'],
                        'constraints': [models.UniqueConstraint(fields=('course', 'user'), name='one_enrollment_per_user')],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
