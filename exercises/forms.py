import secrets
from collections.abc import Iterable

from django import forms
from django.core.validators import RegexValidator

from exercises.models import SiteProfile, StorageTarget
from exercises.start import REPEATS


def new_click() -> str:
    return secrets.token_hex(8)


class StartRunsForm(forms.Form):
    targets = forms.MultipleChoiceField(
        widget=forms.CheckboxSelectMultiple,
        error_messages={
            "required": "Choose at least one storage target to run the exercise on.",
            "invalid_choice": "%(value)s is not a storage target of this site. Choose one "
            "of the targets listed.",
        },
    )
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

    def __init__(self, *args: object, targets: Iterable[StorageTarget], **kwargs: object):
        """`targets`: the site's, in their order."""
        super().__init__(*args, **kwargs)
        self.target_objects = {t.key: t for t in targets}
        self.fields["targets"].choices = [(t.key, t.name) for t in self.target_objects.values()]

    def chosen_targets(self) -> list:
        return [self.target_objects[key] for key in self.cleaned_data["targets"]]


class AdvisorForm(forms.Form):
    access = forms.ChoiceField(
        label="How does the job read and write?",
        choices=[
            ("sequential", "Sequentially: large streams, start to end"),
            ("random", "Randomly: small pieces all over a file"),
            ("mixed", "Both, or I don't know"),
        ],
    )
    file_shape = forms.ChoiceField(
        label="Its files are",
        choices=[("few_large", "A few large files"), ("many_small", "Many small files")],
    )
    file_count = forms.IntegerField(
        label="About how many files?", required=False, min_value=0, max_value=10**10
    )
    data_gib = forms.FloatField(
        label="How much data does it read or write (GiB)?",
        min_value=0,
        max_value=10**7,
        # The advice answers in GiB: one unit on both sides of the page.
        help_text="In GiB, as ls -lh and df -h count: 1 GiB is 1.074 GB.",
    )
    node_memory_gib = forms.FloatField(
        label="Memory per node (GiB)", min_value=0.1, max_value=10**5
    )
    app_memory_gib = forms.FloatField(
        label="Memory the program itself needs (GiB)", min_value=0, max_value=10**5, initial=0
    )
    must_outlive_job = forms.BooleanField(
        label="The results must still be there after the job", required=False, initial=True
    )
    shared_between_nodes = forms.BooleanField(
        label="Several nodes work on the same data at once", required=False
    )


class JoinCourseForm(forms.Form):
    join_code = forms.CharField(
        label="Join code", max_length=16, error_messages={"required": "Type the join code."}
    )

    def clean_join_code(self) -> str:
        return self.cleaned_data["join_code"].strip().upper()


class CourseForm(forms.Form):
    title = forms.CharField(max_length=120)
    exercises = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple)
    targets = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple)
    closes_at = forms.DateTimeField(
        label="Closes at (optional)",
        required=False,
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}),
    )
    max_active_runs = forms.IntegerField(
        label="Runs a trainee may have going at once", min_value=1, max_value=32, initial=4
    )

    def __init__(self, *args: object, profile: SiteProfile, **kwargs: object):
        super().__init__(*args, **kwargs)
        self.profile = profile
        self.fields["exercises"].choices = [
            (e.key, f"{e.key} · {e.title}") for e in profile.exercises.all()
        ]
        self.fields["targets"].choices = [(t.key, t.name) for t in profile.targets.all()]
