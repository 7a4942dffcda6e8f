"""The prediction form: the exercise's targets in the order the trainee expects."""

from collections.abc import Sequence

from django import forms

from exercises.catalogue.models import StorageTarget
from exercises.predictions.versus import ANSWERS, Versus

PLACES = ["Fastest", "2nd", "3rd", "4th", "5th", "6th", "7th", "8th"]
# A figure to expect, on a log scale: half a decade apart, from a crawl to memory.
GUESSES = [1, 3, 10, 30, 100, 300, 1_000, 3_000, 10_000, 30_000]


class PredictionForm(forms.Form):
    """One choice of target per place, fastest first; each target in one place; and,
    if the trainee likes, the MiB/s they expect of it, on a log scale (GUESSES)."""

    def __init__(
        self,
        *args: object,
        targets: list[StorageTarget],
        versus: Sequence[Versus] = (),
        **kwargs: object,
    ):
        super().__init__(*args, **kwargs)
        names = {t.key: t.name for t in targets}
        # Against another exercise on a target the exercise's lesson names (versus.py),
        # where that target is one the trainee ranks.
        self.versus = [v for v in versus if v.target in names]
        self.targets = {t.key: t for t in targets[: len(PLACES)]}
        choices = [("", "choose…")] + [(t.key, t.name) for t in self.targets.values()]
        for i in range(len(self.targets)):
            last = i == len(self.targets) - 1 and i > 0
            self.fields[f"place_{i + 1}"] = forms.ChoiceField(
                label="Slowest" if last else PLACES[i],
                choices=choices,
                error_messages={"required": "Put a target in every place."},
            )
            self.fields[f"figure_{i + 1}"] = forms.TypedChoiceField(
                label="at about",
                choices=[("", "no figure")] + [(g, f"{g:,} MiB/s") for g in GUESSES],
                coerce=int,
                empty_value=None,
                required=False,
            )

        for i, v in enumerate(self.versus):
            other = f"{v.other} there"
            self.fields[f"against_{i + 1}"] = forms.ChoiceField(
                label=f"{v.exercise} on {names[v.target]}, against {v.other}",
                choices=[("", "no guess")] + [(k, f"{w} {other}") for k, w in ANSWERS.items()],
                required=False,
            )

    def against_fields(self) -> list[forms.BoundField]:
        return [self[f"against_{i + 1}"] for i in range(len(self.versus))]

    def places(self) -> list[tuple[forms.BoundField, forms.BoundField]]:
        """Each place's target and figure, fastest first."""
        return [(self[f"place_{i + 1}"], self[f"figure_{i + 1}"]) for i in range(len(self.targets))]

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
        cleaned["figures"] = {
            key: cleaned[f"figure_{i + 1}"]
            for i, key in enumerate(order)
            if key and cleaned.get(f"figure_{i + 1}")
        }
        cleaned["against"] = {
            v.key: cleaned[f"against_{i + 1}"]
            for i, v in enumerate(self.versus)
            if cleaned.get(f"against_{i + 1}")
        }
        return cleaned
