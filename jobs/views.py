from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from jobs.access import runs_visible_to
from jobs.models import BenchmarkRun
from jobs.results import ResultRefused, check_post, header_number, receive_result
from jobs.retention import dropped_note
from jobs.slurm import SlurmError
from jobs.submission import cancel
from portal.errors import NotFound
from portal.polling import poll_answer


def _get_own_run(request: HttpRequest, key: str, *, output: bool = False) -> BenchmarkRun:
    """The run, if it is the user's own (staff may act on any); 404 otherwise, saying
    so in the words of the portal. Its output (up to RESULT_MAX_BYTES) only for the
    page that shows it: the run page is polled every 2 s while it runs."""
    runs = runs_visible_to(request.user)
    if not output:
        runs = runs.defer("raw_output")
    run = runs.select_related("target", "exercise", "result").filter(key=key).first()
    if run is None:
        raise NotFound("No run of yours has this address: it may be another trainee's run.")
    return run


@login_required
def run_detail(request: HttpRequest, key: str) -> HttpResponse:
    run = _get_own_run(request, key)
    ctx = {"run": run, "dropped": dropped_note(run)}
    if request.htmx:
        response = render(request, "jobs/run_detail.html#run-status", ctx)
        return poll_answer(response, still_polling=run.is_unfinished or run.figure_pending)
    return render(request, "jobs/run_detail.html", ctx)


@login_required
def run_output(request: HttpRequest, key: str) -> HttpResponse:
    """The benchmark's raw output, as the job sent it."""
    run = _get_own_run(request, key, output=True)
    if not run.result_received_at:
        raise NotFound("This run's output has not arrived (yet).")
    if run.raw_output_dropped_at:
        return HttpResponse(f"{dropped_note(run)}\n", status=410, content_type="text/plain")
    response = HttpResponse(run.raw_output, content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{run.job_name}-output.txt"'
    return response


@csrf_exempt  # posted by the job script, authenticated by the per-run secret
@require_POST
def run_result(request: HttpRequest, key: str) -> HttpResponse:
    """The job's output. The secret is checked first: only the job learns why else
    its post was refused (a malformed header: 400, too large: 413, a second: 409)."""
    run = get_object_or_404(BenchmarkRun, key=key)
    token = request.headers.get("X-Storagelab-Token", "")
    try:
        check_post(run, token, request.META.get("CONTENT_LENGTH", ""), settings.RESULT_MAX_BYTES)
        exit_header = request.headers.get("X-Benchmark-Exit")
        # The shell's $? of the benchmark: 0-255.
        exit_code = (
            None if exit_header is None else header_number(exit_header, "X-Benchmark-Exit", 0, 255)
        )
        receive_result(run, token, request.body, exit_code)
    except ResultRefused as e:
        return HttpResponse(f"{e}\n", status=e.status, content_type="text/plain")
    return HttpResponse("accepted\n", status=202, content_type="text/plain")


@require_POST
@login_required
def run_cancel(request: HttpRequest, key: str) -> HttpResponseBase:
    run = _get_own_run(request, key)
    try:
        if cancel(run):
            messages.info(request, "The run is being cancelled.")
        else:
            messages.info(request, "The run had already ended; nothing to cancel.")
    except SlurmError as e:
        messages.error(request, f"Slurm could not cancel the run now ({e}). Try again shortly.")
    return redirect("jobs:run-detail", key=run.key)
