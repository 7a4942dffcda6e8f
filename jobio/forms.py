from collections.abc import Iterable

from django import forms

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


class ReplayForm(forms.Form):
    """The targets a checked job is replayed on: every one of the site's, unless unticked."""

    targets = forms.MultipleChoiceField(
        widget=forms.CheckboxSelectMultiple,
        error_messages={
            "required": "Choose at least one storage target to replay the job on.",
            "invalid_choice": "%(value)s is not a storage target of this site. Choose one "
            "of the targets listed.",
        },
    )

    def __init__(self, *args: object, targets: Iterable[StorageTarget], **kwargs: object):
        """`targets`: the site's, in their order; every one ticked at first."""
        super().__init__(*args, **kwargs)
        self.target_objects = {t.key: t for t in targets}
        self.fields["targets"].choices = [(t.key, t.name) for t in self.target_objects.values()]
        self.fields["targets"].initial = list(self.target_objects)

    def chosen_targets(self) -> list[StorageTarget]:
        return [self.target_objects[key] for key in self.cleaned_data["targets"]]
