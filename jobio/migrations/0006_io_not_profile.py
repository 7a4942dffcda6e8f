# A job's I/O is `io`, not `profile`: "profile" is the site's (SiteProfile) alone.
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("jobio", "0005_run_log_dropped"),
    ]

    operations = [
        migrations.RemoveIndex(model_name="runlog", name="runlog_unread"),
        migrations.RenameField(model_name="jobcheck", old_name="profile", new_name="io"),
        migrations.RenameField(model_name="runlog", old_name="profile", new_name="io"),
        migrations.AddIndex(
            model_name="runlog",
            index=models.Index(
                condition=models.Q(("io__isnull", True), ("missing", ""), ("problem", "")),
                fields=["received_at"],
                name="runlog_unread",
            ),
        ),
    ]
