"""The calibration page: start a round, follow it, cancel it, and the site's measured
references beside the published ones (exercises/calibration/rounds.py does the work).

Who may: see the page, instructors and staff (courses/access.py: can_teach); start a round, staff
and whom they give "Can calibrate the site" (rounds.may_calibrate); cancel one,
its starter and staff. A round runs as the clicking person's own cluster account, so
Slurm's accounting shows who measured; anyone else gets a 403.
"""

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseForbidden
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from exercises.calibration import rounds
from exercises.calibration.models import Calibration
from exercises.catalogue.models import Metric, ReferenceResult
from exercises.catalogue.profiles import active_profile
from exercises.courses import access
from portal.models import ClusterAccount
from portal.permissions import only_if
from portal.polling import poll_answer, unchanged

REPEAT_CHOICES = (1, 3, 5)
REFUSED = "Only instructors and staff see the site's calibration."
MAY_NOT_START = (
    'Only staff, or whom they give the permission "Can calibrate the site", start a '
    "calibration: its runs are many, and its figures become the site's reference."
)


@only_if(access.can_teach, REFUSED)
def calibration_page(request: HttpRequest) -> HttpResponse:
    profile = active_profile()
    latest = profile.calibrations.select_related("started_by").first()
    now = rounds.progress(latest) if latest else None
    may_cancel = latest is not None and rounds.may_cancel(request.user, latest)
    if request.htmx:
        # The round's progress, polled every 2 s while it goes.
        version = now.version if now else None
        if not_modified := unchanged(request, version):
            return not_modified
        response = render(
            request,
            "calibration/calibration.html#round-progress",
            {"now": now, "may_cancel": may_cancel},
        )
        going = latest is not None and latest.finished_at is None
        return poll_answer(response, still_polling=going, version=version)
    measured = rounds.measured_table(profile)
    published = {
        (ref.exercise_id, ref.target_id, ref.metric): ref
        for ref in ReferenceResult.objects.filter(exercise__profile=profile)
    }
    ctx = {
        "profile": profile,
        "now": now,
        "may_calibrate": rounds.may_calibrate(request.user),
        "may_cancel": may_cancel,
        "account": ClusterAccount.objects.filter(user=request.user).first(),
        "repeat_choices": REPEAT_CHOICES,
        "rows": [(m, published.get((m.exercise_id, m.target_id, m.metric))) for m in measured],
        "bandwidth": {Metric.WRITE, Metric.READ},
    }
    return render(request, "calibration/calibration.html", ctx)


@require_POST
@only_if(rounds.may_calibrate, MAY_NOT_START)
def calibration_start(request: HttpRequest) -> HttpResponse:
    try:
        repeat = int(request.POST.get("repeat", ""))
    except ValueError:
        repeat = 0
    if repeat not in REPEAT_CHOICES:
        messages.error(request, "Choose how often each run repeats: 1, 3 or 5 times.")
        return redirect("calibration:calibration")
    profile = active_profile()
    try:
        started = rounds.start_round(request.user, profile, repeat=repeat)
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
        return HttpResponseForbidden("Only who started this calibration, or staff, cancel it.")
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
