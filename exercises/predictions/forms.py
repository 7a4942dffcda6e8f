"""The prediction form: the exercise's targets in the order the trainee expects."""

from django import forms

from exercises.catalogue.models import StorageTarget

PLACES = ["Fastest", "2nd", "3rd", "4th", "5th", "6th", "7th", "8th"]


class PredictionForm(forms.Form):
    """One choice of target per place, fastest first; each target in one place."""

    def __init__(self, *args: object, targets: list[StorageTarget], **kwargs: object):
        super().__init__(*args, **kwargs)
        self.targets = {t.key: t for t in targets[: len(PLACES)]}
        choices = [("", "choose…")] + [(t.key, t.name) for t in self.targets.values()]
        for i in range(len(self.targets)):
            last = i == len(self.targets) - 1 and i > 0
            self.fields[f"place_{i + 1}"] = forms.ChoiceField(
                label="Slowest" if last else PLACES[i],
                choices=choices,
                error_messages={"required": "Put a target in every place."},
            )

    def clean(self) -> dict:
        cleaned = super().clean()
        order = [cleaned.get(f"place_{i + 1}") for i in range(len(self.targets))]
        seen = set()
        for key in order:
            if key and key in seen:
                name = self.targets[key].name
                raise forms.ValidationError(f"{name} is in two places: give each target one.")
            seen.add(key)
        cleaned["order"] = order
        return cleaned
