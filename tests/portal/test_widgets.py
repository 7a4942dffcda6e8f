"""The portal's form renderer (portal/widgets.py) draws the widgets it knows without
Django's templates: every form of the portal, blank and sent back with errors, comes out
the same, character for character, as Django draws it."""

import pytest
from django import forms
from django.conf import settings
from django.forms.renderers import DjangoTemplates, get_default_renderer

from exercises.advisor.forms import AdvisorForm
from exercises.calibration.forms import CalibrationForm
from exercises.courses.forms import CourseForm, JoinCourseForm
from exercises.lab.forms import StartRunsForm
from exercises.predictions.forms import PredictionForm
from jobio.forms import JobIdForm, ReplayForm, UploadForm
from portal.widgets import QUICK, QuickRenderer

pytestmark = pytest.mark.django_db


def drawn(form_of, renderer) -> list[str]:
    """Every field of the form and every choice of a multiple choice (its tag, bare and
    in its label), as a page draws them."""
    form = form_of(renderer)
    out = []
    for field in form:
        out.append(str(field))
        if isinstance(field.field.widget, forms.RadioSelect | forms.CheckboxSelectMultiple):
            for choice in field:
                out += [choice.tag(), choice.tag(wrap_label=True)]
    return out


def forms_of_the_portal(dev_profile) -> dict:
    targets = list(dev_profile.targets.all())
    sent = {"targets": ["home", "<b>nope</b>"], "repeat": "7", "click": "x\"'<", "again": "on"}
    guessed = {"place_1": "tmp", "place_2": "tmp", "figure_1": "300", "figure_2": "1e9"}
    course, blank = {"title": "<i>", "max_active_runs": "0"}, {"click": "ab"}
    return {
        "start, blank": lambda r: StartRunsForm(targets=targets, initial=blank, renderer=r),
        "start, sent back": lambda r: StartRunsForm(sent, targets=targets, renderer=r),
        "prediction, blank": lambda r: PredictionForm(targets=targets, renderer=r),
        "prediction, sent back": lambda r: PredictionForm(guessed, targets=targets, renderer=r),
        "course": lambda r: CourseForm(course, profile=dev_profile, renderer=r),
        "join": lambda r: JoinCourseForm({"join_code": '"&'}, renderer=r),
        "calibration": lambda r: CalibrationForm(profile=dev_profile, renderer=r),
        "advisor": lambda r: AdvisorForm(renderer=r),
        "upload": lambda r: UploadForm(renderer=r),
        "job id": lambda r: JobIdForm({"job_id": "12; rm"}, renderer=r),
        "replay": lambda r: ReplayForm({"targets": ["tmp"]}, targets=targets, renderer=r),
    }  # fmt: skip


def test_every_form_of_the_portal_is_drawn_as_django_draws_it(dev_profile) -> None:
    quick, django = QuickRenderer(), DjangoTemplates()
    for name, form_of in forms_of_the_portal(dev_profile).items():
        ours, theirs = drawn(form_of, quick), drawn(form_of, django)
        assert ours == theirs, name


def test_the_prediction_form_is_drawn_without_a_template(dev_profile, monkeypatch) -> None:
    """What the renderer is for: the prediction form's selects and their options never
    reach Django's template engine."""
    assert settings.FORM_RENDERER == "portal.widgets.QuickRenderer"
    assert isinstance(get_default_renderer(), QuickRenderer)
    asked = []
    monkeypatch.setattr(DjangoTemplates, "get_template", lambda self, name: asked.append(name))
    form = PredictionForm(targets=list(dev_profile.targets.all()))
    page = "".join(str(place) + str(figure) for place, figure in form.places())
    assert page.count("<select") == 14 and page.count("<option") == 7 * 8 + 7 * 11
    assert asked == []
    assert set(QUICK) >= {
        "django/forms/widgets/select.html",
        "django/forms/widgets/select_option.html",
    }
