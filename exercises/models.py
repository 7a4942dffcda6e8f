import re

from django.core.exceptions import ValidationError
from django.db import models

from portal.models import cluster_username_validator

# Absolute, plain path characters, and the cluster user name in place of {user}.
_PATH_TEMPLATE = re.compile(r"^/[A-Za-z0-9_./-]*\{user\}[A-Za-z0-9_./-]*\Z")


def validate_path_template(value: str) -> None:
    if not _PATH_TEMPLATE.match(value) or ".." in value or value.count("{user}") != 1:
        raise ValidationError(
            "An absolute path of letters, digits, '_', '.', '-' and '/', with {user} "
            "once where the cluster account name goes, e.g. /scratch/{user}."
        )


class StorageTarget(models.Model):
    """A filesystem users can put their data on ($HOME, $GLOBAL, $TMPDIR, ...)."""

    key = models.SlugField(max_length=32, unique=True)
    name = models.CharField(max_length=32, help_text="As users know it, e.g. $GLOBAL")
    filesystem = models.CharField(max_length=64, help_text="e.g. NFS, GPFS, BeeGFS, tmpfs")
    path_template = models.CharField(
        max_length=255,
        validators=[validate_path_template],
        help_text="The user's own directory on it, e.g. /scratch/{user}",
    )
    in_memory = models.BooleanField(
        default=False, help_text="tmpfs and the like: no O_DIRECT, space comes from RAM"
    )

    class Meta:
        ordering = ["key"]

    def __str__(self) -> str:
        return self.name

    def directory_for(self, cluster_username: str) -> str:
        validate_path_template(self.path_template)
        cluster_username_validator(cluster_username)
        return self.path_template.replace("{user}", cluster_username)
