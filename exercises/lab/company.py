"""A run's page says what the run shared (jobs/company.py) and how its figure stands
against the site's quiet figure (exercises/catalogue/quiet.py). The run page is the
jobs app's, which may not read the catalogue: it loads this fragment, as it loads
jobio's summary of the run's I/O."""

from uuid import UUID

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from exercises.catalogue.lessons import spread_exercise
from exercises.catalogue.models import Exercise
from exercises.catalogue.quiet import quiet_figures, shared
from jobs.access import runs_visible_to
from jobs.company import annotated, companions, company
from jobs.models import RunStatus
from portal.errors import NotFound
from portal.polling import poll_answer


@login_required
def run_company(request: HttpRequest, key: UUID) -> HttpResponse:
    """What the run shared: its owner sees how many runs and whose (theirs, other
    trainees', the site's), staff also which runs. Followed while the run goes."""
    visible = runs_visible_to(request.user).select_related("target", "exercise", "result", "user")
    run = annotated(visible.defer("job_script", "workload", "raw_output")).filter(key=key).first()
    if run is None:
        raise NotFound("No run of yours has this address: it may be another trainee's run.")
    result = getattr(run, "result", None) if run.status == RunStatus.COMPLETED else None
    said = shared(run, company(run), quiet_figures([run]), result.write_mib_s if result else None)
    owner = "yours" if run.user_id == request.user.pk else f"{run.user.get_username()}'s"
    ctx = {
        "run": run,
        "said": said,
        "company_sentence": said.company_sentence(owner) if said else "",
        "figure_sentence": said.figure_sentence(owner) if said else "",
        # Other trainees' names and runs are for staff only.
        "companions": companions(run) if request.user.is_staff and said else None,
        "following": run.is_unfinished or run.figure_pending,
    }
    if said and said.paid and run.exercise:
        # Which exercise teaches how far runs scatter (1 query, only for a run that paid).
        ctx["spread"] = spread_exercise(Exercise.objects.filter(profile_id=run.exercise.profile_id))
    if request.htmx:
        response = render(request, "lab/run_company.html#run-company", ctx)
        return poll_answer(response, still_polling=ctx["following"])
    return render(request, "lab/run_company.html", ctx)
