"""The calibration form: which exercises on which targets, how often, and whether the
person has seen what that costs (the page asks before anything starts)."""

from django import forms

from exercises.catalogue.models import Exercise, SiteProfile, StorageTarget

REPEAT_CHOICES = (1, 3, 5)


class CalibrationForm(forms.Form):
    exercises = forms.MultipleChoiceField(
        widget=forms.CheckboxSelectMultiple,
        error_messages={"required": "Choose at least one exercise to calibrate."},
    )
    targets = forms.MultipleChoiceField(
        widget=forms.CheckboxSelectMultiple,
        error_messages={"required": "Choose at least one storage target to calibrate."},
    )
    repeat = forms.TypedChoiceField(
        choices=[(n, f"×{n}") for n in REPEAT_CHOICES],
        coerce=int,
        initial=3,
        widget=forms.RadioSelect,
        error_messages={"invalid_choice": "Choose how often each run repeats: 1, 3 or 5 times."},
    )
    # Set by the confirmation's button only: without it, the page shows the cost.
    confirmed = forms.BooleanField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args: object, profile: SiteProfile, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.site_exercises = list(profile.exercises.all())
        self.site_targets = list(profile.targets.all())
        self.fields["exercises"].choices = [(e.key, f"{e.key}") for e in self.site_exercises]
        self.fields["targets"].choices = [(t.key, t.name) for t in self.site_targets]
        self.fields["exercises"].initial = [e.key for e in self.site_exercises]
        self.fields["targets"].initial = [t.key for t in self.site_targets]

    def chosen_exercises(self) -> list[Exercise]:
        keys = set(self.cleaned_data["exercises"])
        return [e for e in self.site_exercises if e.key in keys]

    def chosen_targets(self) -> list[StorageTarget]:
        keys = set(self.cleaned_data["targets"])
        return [t for t in self.site_targets if t.key in keys]

    def first_error(self) -> str:
        return next(iter(self.errors.values()))[0]
