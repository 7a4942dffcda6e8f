# The teaching domain's models move to their own apps (catalogue, quotas, courses,
# calibration): in Django's state only. Their tables keep their names (each model pins
# db_table) and every row; the permissions and admin history follow the content types.

from django.db import migrations


MOVED = {
    "catalogue": (
        "siteprofile", "storagetarget", "exercise", "referenceresult", "measuredreference",
        "quotasource",
    ),
    "calibration": ("calibration",),
    "courses": ("course", "enrollment"),
    "quotas": ("quota",),
}


def _move(apps, to_new: bool) -> None:
    ContentType = apps.get_model("contenttypes", "ContentType")
    for app, models in MOVED.items():
        old, new = ("exercises", app) if to_new else (app, "exercises")
        ContentType.objects.filter(app_label=old, model__in=models).update(app_label=new)


def content_types_follow(apps, schema_editor) -> None:
    """The moved models' content types go with them, so "Can create and teach courses"
    and "Can calibrate the site" stay granted and the admin's history keeps its links."""
    _move(apps, to_new=True)


def content_types_stay(apps, schema_editor) -> None:
    _move(apps, to_new=False)


class Migration(migrations.Migration):

    dependencies = [
        ('contenttypes', '0002_remove_content_type_name'),
        ('quotas', '0001_initial'),
        ('calibration', '0002_calibration_relations'),
        ('exercises', '0010_exercise_time_direct_claims'),
        ('jobs', '0006_runs_point_at_the_new_apps'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            # The tables exist (exercises' migrations made them): state only.
            state_operations=[
                migrations.RemoveField(
                    model_name='measuredreference',
                    name='calibration',
                ),
                migrations.RemoveField(
                    model_name='course',
                    name='exercises',
                ),
                migrations.RemoveField(
                    model_name='course',
                    name='instructors',
                ),
                migrations.RemoveField(
                    model_name='course',
                    name='profile',
                ),
                migrations.RemoveField(
                    model_name='course',
                    name='targets',
                ),
                migrations.RemoveField(
                    model_name='enrollment',
                    name='course',
                ),
                migrations.RemoveField(
                    model_name='enrollment',
                    name='user',
                ),
                migrations.RemoveField(
                    model_name='exercise',
                    name='profile',
                ),
                migrations.RemoveField(
                    model_name='measuredreference',
                    name='exercise',
                ),
                migrations.RemoveField(
                    model_name='referenceresult',
                    name='exercise',
                ),
                migrations.RemoveField(
                    model_name='measuredreference',
                    name='target',
                ),
                migrations.RemoveField(
                    model_name='quota',
                    name='account',
                ),
                migrations.RemoveField(
                    model_name='quota',
                    name='target',
                ),
                migrations.RemoveField(
                    model_name='quotasource',
                    name='target',
                ),
                migrations.RemoveField(
                    model_name='referenceresult',
                    name='target',
                ),
                migrations.RemoveField(
                    model_name='storagetarget',
                    name='profile',
                ),
                migrations.DeleteModel(
                    name='Calibration',
                ),
                migrations.DeleteModel(
                    name='Course',
                ),
                migrations.DeleteModel(
                    name='Enrollment',
                ),
                migrations.DeleteModel(
                    name='Exercise',
                ),
                migrations.DeleteModel(
                    name='MeasuredReference',
                ),
                migrations.DeleteModel(
                    name='Quota',
                ),
                migrations.DeleteModel(
                    name='QuotaSource',
                ),
                migrations.DeleteModel(
                    name='ReferenceResult',
                ),
                migrations.DeleteModel(
                    name='SiteProfile',
                ),
                migrations.DeleteModel(
                    name='StorageTarget',
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(content_types_follow, content_types_stay),
    ]
