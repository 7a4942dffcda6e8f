"""The calibration page: start a round, follow it, cancel it, and the site's measured
references beside the published ones (exercises/calibration/rounds.py does the work).

Who may: see the page, instructors and staff (courses/access.py: can_teach); start a round, staff
and whom they give "Can calibrate the site" (rounds.may_calibrate); cancel one,
its starter and staff. A round runs as the clicking person's own cluster account, so
Slurm's accounting shows who measured; anyone else gets a 403.
"""

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from exercises.calibration import plans, rounds
from exercises.calibration.forms import CalibrationForm
from exercises.calibration.models import Calibration
from exercises.catalogue.models import Metric, ReferenceResult, SiteProfile
from exercises.catalogue.profiles import active_profile
from exercises.courses import access
from portal.errors import error_page
from portal.models import ClusterAccount
from portal.permissions import only_if
from portal.polling import poll_answer, unchanged

REFUSED = "Only instructors and staff see the site's calibration."
MAY_NOT_START = (
    'Only staff, or whom they give the permission "Can calibrate the site", start a '
    "calibration: its runs are many, and its figures become the site's reference."
)


@only_if(access.can_teach, REFUSED)
def calibration_page(request: HttpRequest) -> HttpResponse:
    profile = active_profile()
    if request.htmx:
        # The round's progress, polled every 2 s while it goes.
        latest = profile.calibrations.select_related("started_by").first()
        now = rounds.progress(latest) if latest else None
        version = now.version if now else None
        if not_modified := unchanged(request, version):
            return not_modified
        may_cancel = latest is not None and rounds.may_cancel(request.user, latest)
        response = render(
            request,
            "calibration/calibration.html#round-progress",
            {"now": now, "may_cancel": may_cancel},
        )
        going = latest is not None and latest.finished_at is None
        return poll_answer(response, still_polling=going, version=version)
    return _page(request, profile, CalibrationForm(profile=profile))


def _page(
    request: HttpRequest,
    profile: SiteProfile,
    form: CalibrationForm,
    cost: plans.Plan | None = None,
) -> HttpResponse:
    latest = profile.calibrations.select_related("started_by").first()
    measured = rounds.measured_table(profile)
    published = {
        (ref.exercise_id, ref.target_id, ref.metric): ref
        for ref in ReferenceResult.objects.filter(exercise__profile=profile)
    }
    ctx = {
        "profile": profile,
        "now": rounds.progress(latest) if latest else None,
        "may_calibrate": rounds.may_calibrate(request.user),
        "may_cancel": latest is not None and rounds.may_cancel(request.user, latest),
        "account": ClusterAccount.objects.filter(user=request.user).first(),
        "form": form,
        "cost": cost,
        "rows": [(m, published.get((m.exercise_id, m.target_id, m.metric))) for m in measured],
        "bandwidth": {Metric.WRITE, Metric.READ},
    }
    return render(request, "calibration/calibration.html", ctx)


@require_POST
@only_if(rounds.may_calibrate, MAY_NOT_START)
def calibration_start(request: HttpRequest) -> HttpResponse:
    """Twice: first the choices come back with what they cost (no job starts), then
    the confirmation's button starts them."""
    profile = active_profile()
    form = CalibrationForm(request.POST, profile=profile)
    if not form.is_valid():
        messages.error(request, form.first_error())
        return redirect("calibration:calibration")
    exercises, targets = form.chosen_exercises(), form.chosen_targets()
    if not form.cleaned_data["confirmed"]:
        cost = plans.plan(exercises, targets, form.cleaned_data["repeat"])
        return _page(request, profile, form, cost)
    try:
        started = rounds.start_round(
            request.user,
            profile,
            repeat=form.cleaned_data["repeat"],
            exercise_keys=[e.key for e in exercises],
            target_keys=[t.key for t in targets],
        )
    except rounds.CalibrationRefused as refused:
        messages.error(request, str(refused))
        return redirect("calibration:calibration")
    total = rounds.progress(started).total
    messages.info(request, f"Calibration started: {total} runs, a few at a time.")
    return redirect("calibration:calibration")


@require_POST
@only_if(access.can_teach, REFUSED)
def calibration_cancel(request: HttpRequest, pk: int) -> HttpResponse:
    round_ = Calibration.objects.filter(pk=pk, profile=active_profile()).first()
    if round_ is None:
        messages.error(request, "No such calibration round of this site.")
        return redirect("calibration:calibration")
    if not rounds.may_cancel(request.user, round_):
        return error_page(request, 403, "Only who started this calibration, or staff, cancel it.")
    try:
        stuck = rounds.cancel_round(round_.pk, request.user)
    except rounds.CalibrationRefused as refused:
        messages.error(request, str(refused))
        return redirect("calibration:calibration")
    if stuck:
        messages.warning(
            request,
            f"Calibration cancelled; Slurm could not cancel {stuck} of its runs now. They end "
            "by their time limit, and their figures are not kept.",
        )
    else:
        messages.info(request, "Calibration cancelled; its figures are not kept.")
    return redirect("calibration:calibration")
