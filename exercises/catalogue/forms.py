"""A form field every page that runs something on the site's targets shares: a checkbox
per target, and the targets the user ticked (the lab's start, a job's replay)."""

from collections.abc import Iterable

from django import forms

from exercises.catalogue.models import StorageTarget


def targets_field(to_do: str) -> forms.MultipleChoiceField:
    """A checkbox per target; `to_do` ends the sentence of a form sent with none ticked:
    "Choose at least one storage target to run the exercise on."."""
    return forms.MultipleChoiceField(
        widget=forms.CheckboxSelectMultiple,
        error_messages={
            "required": f"Choose at least one storage target to {to_do}.",
            "invalid_choice": "%(value)s is not a storage target of this site. Choose one "
            "of the targets listed.",
        },
    )


class TargetsForm(forms.Form):
    """A form whose `targets` (targets_field) are the site's, in their order."""

    def __init__(self, *args: object, targets: Iterable[StorageTarget], **kwargs: object):
        super().__init__(*args, **kwargs)
        self.target_objects = {t.key: t for t in targets}
        self.fields["targets"].choices = [(t.key, t.name) for t in self.target_objects.values()]

    def chosen_targets(self) -> list[StorageTarget]:
        return [self.target_objects[key] for key in self.cleaned_data["targets"]]
