from collections import Counter

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from exercises.catalogue import measuring
from exercises.catalogue.figures import chart
from exercises.catalogue.models import Exercise
from exercises.catalogue.profiles import active_profile
from exercises.courses import access
from exercises.lab import pages, reading
from exercises.lab.forms import StartRunsForm, new_click
from exercises.lab.start import StartAgain, StartRefused, start_runs
from exercises.predictions import versus
from exercises.predictions.compare import names_of, outcome
from exercises.predictions.forms import PredictionForm
from exercises.predictions.models import Prediction
from exercises.predictions.rules import (
    asked_first,
    has_run,
    may_predict,
    ranked_targets,
    takes_prediction,
)
from exercises.weather import pages as weather_pages
from jobs import slots
from jobs.models import UNFINISHED_STATUSES, BenchmarkRun, RunStatus
from portal.errors import NotFound
from portal.polling import poll_answer, unchanged


@login_required
def exercise_list(request: HttpRequest) -> HttpResponse:
    profile = active_profile()
    ctx = {"profile": profile, "progress": pages.progress(profile, request.user)}
    return render(request, "lab/exercise_list.html", ctx)


@login_required
def exercise_detail(request: HttpRequest, key: str) -> HttpResponse:
    panel = pages.panel_state(key, request.user)
    if request.htmx:
        return _runs_panel(request, panel)
    # ?targets=tmp&targets=home ticks those targets (Check my job links here so).
    form = StartRunsForm(
        targets=pages.site_of(panel).targets,
        initial={"targets": request.GET.getlist("targets"), "click": new_click()},
    )
    return _page(request, panel, form)


@require_POST
@login_required
def exercise_start(request: HttpRequest, key: str) -> HttpResponse:
    exercise_site = pages.exercise_site(key)
    exercise = exercise_site.exercise
    form = StartRunsForm(request.POST, targets=exercise_site.targets)
    notice = _start_runs(request, exercise, form)
    # What the page shows now: the runs just started with the others.
    panel = pages.panel_state(key, request.user)
    if request.htmx:
        # The form's next click gets a name of its own (swapped in out of band).
        ctx = _panel_context(request, panel) | {"notice": notice, "next_click": new_click()}
        return render(request, "lab/exercise_detail.html#runs-panel", ctx)
    if "again" in notice:  # asking first: the page with the question and its form
        return _page(request, panel, form, notice)
    if notice["level"] == "error":
        return _page(request, panel, form, notice, status=400)
    messages.add_message(request, _LEVELS[notice["level"]], notice["text"])
    return redirect("lab:exercise-detail", key=exercise.key)


_LEVELS = {"info": messages.INFO, "warning": messages.WARNING}


@require_POST
@login_required
def exercise_predict(request: HttpRequest, key: str) -> HttpResponse:
    """Saves the trainee's prediction of how the targets rank, until their first run
    of the exercise: from then on it stays as it was, to be set beside the runs."""
    panel = pages.panel_state(key, request.user)
    exercise_site = pages.site_of(panel)
    exercise = exercise_site.exercise
    if not takes_prediction(exercise):
        raise NotFound(f"{exercise.key} measures file operations: there is no order to predict.")
    if not may_predict(exercise, ran=has_run(request.user, exercise)):
        messages.error(
            request,
            f"Your runs of {exercise.key} have started: a prediction is made before the "
            "first run and then stays as it was. Predict the next exercise before you run it.",
        )
        return redirect("lab:exercise-detail", key=exercise.key)
    courses = access.open_courses_for(request.user, exercise, exercise_site.targets)
    form = PredictionForm(
        request.POST,
        targets=ranked_targets(exercise_site.targets, courses),
        versus=versus.questions(exercise),
    )
    if not form.is_valid():
        start = StartRunsForm(targets=exercise_site.targets, initial={"click": new_click()})
        return _page(request, panel, start, prediction_form=form, status=400)
    Prediction.objects.update_or_create(
        user=request.user,
        exercise=exercise,
        defaults={
            "order": form.cleaned_data["order"],
            "figures": form.cleaned_data["figures"],
            "against": form.cleaned_data["against"],
            "made_at": timezone.now(),
        },
    )
    messages.info(request, "Your prediction is saved. Now run the exercise and see.")
    return redirect("lab:exercise-detail", key=exercise.key)


def _page(
    request: HttpRequest,
    panel: pages.PanelState,
    form: StartRunsForm,
    notice=None,
    status=200,
    prediction_form: PredictionForm | None = None,
) -> HttpResponse:
    ctx = _panel_context(request, panel) | {
        "form": form,
        "notice": notice,
        "runs_in_turn": settings.RUNS_IN_TURN,
    }
    if ctx["exercise"].spread:
        # Where the exercise's runs go on each target (Exercise.spread): said by the form.
        ctx["spread_layouts"] = [
            (t.name, t.spread_directory) for t in pages.site_of(panel).targets if t.spread_directory
        ]
    ctx["compressed"] = pages.compressed(ctx["exercise"], ctx["runs"])
    if may_predict(ctx["exercise"], ran=bool(ctx["runs"])):
        site_targets = pages.site_of(panel).targets
        courses_by_target = access.open_courses_for(request.user, ctx["exercise"], site_targets)
        targets = ranked_targets(site_targets, courses_by_target)
        mine = list(panel.prediction or ())  # read with the panel's state
        guessed = dict(panel.guesses)
        ranked = {t.key for t in targets}
        asked = [v for v in versus.questions(ctx["exercise"]) if v.target in ranked]
        answered = dict(panel.against)
        initial = (
            {f"place_{i + 1}": key for i, key in enumerate(mine)}
            | {f"figure_{i + 1}": guessed[key] for i, key in enumerate(mine) if key in guessed}
            | {
                f"against_{i + 1}": answered[v.key]
                for i, v in enumerate(asked)
                if v.key in answered
            }
        )
        ctx["prediction_form"] = prediction_form or PredictionForm(
            initial=initial, targets=targets, versus=asked
        )
        names = {t.key: t.name for t in site_targets}
        ctx["prediction_order"] = names_of(mine, names) if mine else None
        ctx["prediction_required"] = asked_first(courses_by_target.values())
    return render(request, "lab/exercise_detail.html", ctx, status=status)


def _runs_panel(request: HttpRequest, panel: pages.PanelState) -> HttpResponse:
    """The panel as polled every 2 s while a run of mine is going: one query when
    nothing changed (304)."""
    if not_modified := unchanged(request, panel.version):
        return not_modified
    ctx = _panel_context(request, panel)
    response = render(request, "lab/exercise_detail.html#runs-panel", ctx)
    return poll_answer(response, still_polling=bool(ctx["poll_seconds"]), version=panel.version)


def _panel_context(request: HttpRequest, panel: pages.PanelState) -> dict:
    exercise_site = pages.site_of(panel)
    exercise = exercise_site.exercise
    runs = pages.my_runs(exercise, request.user)
    pages.say_shared(runs, exercise_site)  # what each shared, read with the runs
    measured = not pages.nothing_measured(runs)
    figures = pages.comparison(request.user, panel, measured)
    if any(run.status == RunStatus.WAITING for run in runs):
        # Its place among all my waiting runs, of every exercise (1 query more).
        places = slots.waiting_places(request.user.pk)
        for run in runs:
            run.waiting_place = places.get(run.pk)
    # Also while a completed run's figure is being read: it shows a moment after.
    polling = any(run.status in UNFINISHED_STATUSES or run.figure_pending for run in runs)
    # Where the site has no quiet figure yet, why, and when it will (a calibration going).
    rates = pages.rates(exercise, request.user, figures) if exercise.measures_metadata else None
    standing = measuring.say_unmeasured(exercise.profile_id, rates or figures)
    lesson = reading.lesson_lines(exercise_site, request.user, measured)
    verdicts = lesson.verdicts
    # Once there are runs, what they say of my prediction, if I made one, and of my
    # answers against other exercises (the lesson's figures).
    predicted, against = None, []
    if runs and panel.prediction:
        names = {f.target.key: f.target.name for f in figures}
        medians = {f.target.name: f.my_median for f in figures if f.my_median}
        predicted = outcome(list(panel.prediction), names, medians, dict(panel.guesses))
        against = versus.said(versus.questions(exercise), dict(panel.against), verdicts, names)
    class_refresh = settings.CLASS_REFRESH_SECONDS or None
    return {
        "exercise": exercise,
        "runs": runs,
        "figures": figures,
        "chart": chart(figures, "mine", "class", "reference", "measured"),
        "rates": rates,
        "measuring": standing.sentence(exercise.key) if standing else "",
        "lesson": lesson.lines,
        "findings": lesson.findings,
        "against": against,
        "sweep": pages.sweep(exercise, runs),
        "predicted": predicted,
        # Every 2 s while a run of mine is going, every WAITING_POLL_SECONDS while mine
        # only wait. While my class still has runs of it going, their figures come in
        # after mine are done: the panel looks again at the pace they refresh (a 304
        # while nothing changed), and stops with the class's last run.
        "poll_seconds": (2 if panel.closely else settings.WAITING_POLL_SECONDS)
        if polling
        else (class_refresh if panel.class_going else None),
        "version": panel.version,  # its polls send it back (portal/polling.py)
    }


def _start_runs(request: HttpRequest, exercise: Exercise, form: StartRunsForm) -> dict:
    """Starts the chosen runs (some may wait for a free slot), or none at all: the
    notice says which, or why."""
    if not form.is_valid():
        errors = (error for field in form.errors.values() for error in field)
        return {"level": "error", "text": " ".join(errors)}
    try:
        runs = start_runs(
            request.user,
            exercise,
            form.chosen_targets(),
            form.cleaned_data["repeat"],
            click=form.cleaned_data["click"],
            ask_if_repeated=not form.cleaned_data["again"],
        )
    except StartAgain as asked:
        # The same start as the form's, said once more (the panel's own small form).
        again = {
            "targets": form.cleaned_data["targets"],
            "repeat": form.cleaned_data["repeat"],
            "click": new_click(),
        }
        return {"level": "info", "text": str(asked), "again": again}
    except StartRefused as refused:
        return {"level": "error", "text": str(refused)}
    started = [run for run in runs if run.status == RunStatus.QUEUED]
    waiting = len(runs) - len(started)
    if any(run.status_reason for run in started):
        # Saved, but their submission could not be sent (jobs/submission.py: _enqueue).
        text = (
            f"{_started(exercise, started)}, but the portal's task queue is not answering: "
            "the runs wait below as queued and go to the cluster by themselves once it is "
            "back. Nothing to do; you may cancel them meanwhile."
        )
        return {"level": "warning", "text": text}
    if not waiting:
        return {"level": "info", "text": f"{_started(exercise, started)}. Results appear below."}
    itself = "itself" if waiting == 1 else "themselves"
    later = (
        f"wait{'s' if waiting == 1 else ''} for a free slot and start{'s' if waiting == 1 else ''} "
        f"by {itself} as your runs finish"
    )
    if not started:
        runs_of = f"Your {waiting} run{'s' if waiting > 1 else ''} of {exercise.key}"
        return {"level": "info", "text": f"{runs_of} {later}; nothing to do."}
    return {"level": "info", "text": f"{_started(exercise, started)}; {waiting} more {later}."}


def _started(exercise: Exercise, started: list[BenchmarkRun]) -> str:
    """ "Started 1a on $HOME, $SCRATCH ×2": the targets in the order they were chosen."""
    per_target = Counter(run.target.name for run in started)
    names = ", ".join(name if n == 1 else f"{name} ×{n}" for name, n in per_target.items())
    return f"Started {exercise.key} on {names}"


@login_required
def target_detail(request: HttpRequest, key: str) -> HttpResponse:
    profile = active_profile()
    target = pages.get_target(profile, key)
    rows = pages.target_figures(target, request.user)
    measuring.say_unmeasured(profile.pk, rows)  # why a figure is missing, and when it comes
    ctx = {
        "target": target,
        "rows": rows,
        "kinds": weather_pages.weather([target])[target.pk],
    }
    return render(request, "lab/target_detail.html", ctx)
