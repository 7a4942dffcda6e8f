from collections.abc import Iterable

from django import forms

from exercises.catalogue.forms import TargetsForm, targets_field
from exercises.catalogue.models import StorageTarget


class UploadForm(forms.Form):
    log = forms.FileField(
        label="Darshan log of the job (.darshan)",
        error_messages={"required": "Choose the job's .darshan file to upload."},
    )


class JobIdForm(forms.Form):
    job_id = forms.IntegerField(
        label="Slurm job id",
        min_value=1,
        max_value=2**63 - 1,
        error_messages={
            "required": "Type the job's id (sacct lists your jobs).",
            "invalid": "A Slurm job id is a number, such as 4478544.",
        },
    )


class ReplayForm(TargetsForm):
    """The targets a checked job is replayed on: every one of the site's, unless unticked."""

    targets = targets_field("replay the job on")

    def __init__(self, *args: object, targets: Iterable[StorageTarget], **kwargs: object):
        super().__init__(*args, targets=targets, **kwargs)
        self.fields["targets"].initial = list(self.target_objects)
