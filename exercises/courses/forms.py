"""Making a course and joining one."""

from django import forms

from exercises.catalogue.models import SiteProfile


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
        # As the browser's date-time field reads and sends it; any other format shows
        # an empty field, and an edit would then drop the course's closing time.
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
    )
    max_active_runs = forms.IntegerField(
        label="Runs a trainee may have going at once", min_value=1, max_value=32, initial=4
    )
    predictions_required = forms.BooleanField(
        label="Trainees predict first (each ranks the targets before their first run)",
        required=False,
    )

    def __init__(self, *args: object, profile: SiteProfile, **kwargs: object):
        super().__init__(*args, **kwargs)
        self.profile = profile
        self.fields["exercises"].choices = [
            (e.key, f"{e.key} · {e.title}") for e in profile.exercises.all()
        ]
        self.fields["targets"].choices = [(t.key, t.name) for t in profile.targets.all()]
