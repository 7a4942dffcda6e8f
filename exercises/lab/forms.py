"""The lab form: which targets an exercise runs on, and how often."""

import secrets

from django import forms
from django.core.validators import RegexValidator

from exercises.catalogue.forms import TargetsForm, targets_field
from exercises.lab.start import REPEATS


def new_click() -> str:
    return secrets.token_hex(8)


class StartRunsForm(TargetsForm):
    targets = targets_field("run the exercise on")

    # Left out (an older page, a script): once.
    repeat = forms.TypedChoiceField(
        label="Runs on each target",
        choices=[(str(n), "once" if n == 1 else f"×{n}") for n in REPEATS],
        coerce=int,
        required=False,
        empty_value=1,
        initial="1",
        widget=forms.RadioSelect,
        error_messages={
            "invalid_choice": "%(value)s is not a number of runs the lab offers: run "
            f"each target {', '.join(map(str, REPEATS[:-1]))} or {REPEATS[-1]} times."
        },
    )

    # One per rendered form (new_click): the server starts a click's runs once.
    click = forms.CharField(
        required=False,
        max_length=32,
        widget=forms.HiddenInput,
        validators=[RegexValidator(r"^[0-9a-f]*$", "The form is damaged: reload the page.")],
    )

    # Sent by "Start them once more" (exercises/lab/start.py: StartAgain).
    again = forms.BooleanField(required=False, widget=forms.HiddenInput)
