from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from exercises.advisor.facts import advice_for
from exercises.advisor.job_io import JobIO
from exercises.catalogue.profiles import active_profile
from exercises.weather.pages import slow_now
from jobio import checks, replay_figures, replays, runs
from jobio.charts import chart_data, size_rows
from jobio.forms import JobIdForm, ReplayForm, UploadForm
from jobio.models import JobCheck
from jobio.replay import MIN_SECONDS
from jobio.tasks import read_once_committed, read_run_logs_once_committed
from jobs.access import runs_visible_to
from jobs.engines import Workload
from jobs.models import BenchmarkRun
from jobs.results import ResultRefused, check_post
from jobs.slurm import SlurmError
from jobs.submission import cancel_all
from portal.errors import NotFound
from portal.polling import poll_answer
from portal.units import MiB


@login_required
def check_page(request: HttpRequest) -> HttpResponse:
    return _page(request, UploadForm(), JobIdForm())


def _page(
    request: HttpRequest, upload: UploadForm, job: JobIdForm, error: str = "", status: int = 200
) -> HttpResponse:
    ctx = {
        "upload_form": upload,
        "job_form": job,
        "log_dir": bool(settings.DARSHAN_LOG_DIR),
        "max_mib": settings.DARSHAN_MAX_BYTES // MiB,
        "checks": checks.recent_checks(request.user),
        "error": error,
    }
    return render(request, "jobio/check.html", ctx, status=status)


@require_POST
@login_required
def check_upload(request: HttpRequest) -> HttpResponse:
    # Before Django reads the body into a file: a too large upload is refused unread.
    length = int(request.META.get("CONTENT_LENGTH") or 0)
    if length > settings.DARSHAN_MAX_BYTES + 64 * 1024:
        error = checks.too_big(length, settings.DARSHAN_MAX_BYTES)
        return _page(request, UploadForm(), JobIdForm(), error, status=413)
    form = UploadForm(request.POST, request.FILES)
    if not form.is_valid():
        return _page(request, form, JobIdForm(), status=400)
    upload = form.cleaned_data["log"]
    if upload.size > settings.DARSHAN_MAX_BYTES:
        error = checks.too_big(upload.size, settings.DARSHAN_MAX_BYTES)
        return _page(request, UploadForm(), JobIdForm(), error, status=413)
    try:
        # On disk, unread: the user's limits first (jobio/checks.py).
        check = checks.from_upload(request.user, upload)
    except checks.CheckRefused as refused:
        return _page(request, UploadForm(), JobIdForm(), str(refused), status=400)
    read_once_committed(check)
    return redirect("jobio:detail", pk=check.pk)


@require_POST
@login_required
def check_job(request: HttpRequest) -> HttpResponse:
    form = JobIdForm(request.POST)
    if not settings.DARSHAN_LOG_DIR:
        error = "This site keeps no Darshan logs for the portal to read: upload the log."
        return _page(request, UploadForm(), form, error, status=400)
    if not form.is_valid():
        return _page(request, UploadForm(), form, status=400)
    try:
        check = checks.from_log_dir(request.user, form.cleaned_data["job_id"])
    except checks.CheckRefused as refused:
        return _page(request, UploadForm(), form, str(refused), status=400)
    read_once_committed(check)
    return redirect("jobio:detail", pk=check.pk)


@login_required
def check_detail(request: HttpRequest, pk: str) -> HttpResponse:
    """A check as it is read (polled every second), then its I/O and advice."""
    return _detail(request, checks.visible_check(request.user, pk))


def _detail(
    request: HttpRequest,
    found: JobCheck | checks.Failure,
    replay_form: ReplayForm | None = None,
    replay_error: str = "",
    status: int = 200,
) -> HttpResponse:
    ctx = {"check": found, "failure": None, "reading": False}
    if isinstance(found, checks.Failure):
        ctx["failure"] = found
    elif found.reading:
        ctx["reading"] = True
    else:
        ctx |= _result(request, found, replay_form, replay_error)
    if request.htmx:
        response = render(request, "jobio/check_detail.html#check-result", ctx, status=status)
        return poll_answer(response, still_polling=ctx["reading"])
    return render(request, "jobio/check_detail.html", ctx, status=status)


def _result(
    request: HttpRequest, check: JobCheck, replay_form: ReplayForm | None, replay_error: str
) -> dict:
    io = JobIO.from_json(check.io)
    profile = active_profile()
    own = check.user_id == request.user.pk  # staff see a check; only its owner replays it
    if own and replay_form is None:
        replay_form = ReplayForm(targets=profile.targets.order_by("order"))
    job = advice_for(io, profile)
    link = None
    names = {r.target_key: r.target_name for r in job.advice.ranking}
    if job.resembles:
        url = reverse("lab:exercise-detail", args=[job.resembles.key])
        link = f"{url}?{urlencode([('targets', key) for key in job.recommended])}"
    return {
        "io": io,
        "job": job,
        "site": profile,
        "exercise_link": link,
        "slow_now": slow_now(profile),  # said beside each target that reads slow now
        "recommended_names": " and ".join(names[key] for key in job.recommended),
        "chart": chart_data(io),
        "size_rows": size_rows(io),
        "replay_form": replay_form if own else None,
        "replay_error": replay_error,
        "replays": list(check.replays.all()[:5]),
        "replay_seconds": max(settings.REPLAY_SECONDS, MIN_SECONDS),
        "replay_max_bytes": settings.REPLAY_MAX_BYTES,
    }


# --- Replay my job ---------------------------------------------------------------


@require_POST
@login_required
def replay_start(request: HttpRequest, pk: str) -> HttpResponse:
    """Replays a checked job on the ticked targets as its owner (jobio/replays.py)."""
    found = checks.visible_check(request.user, pk)
    if isinstance(found, checks.Failure) or found.user_id != request.user.pk:
        raise NotFound("No such check of yours.")
    form = ReplayForm(request.POST, targets=active_profile().targets.order_by("order"))
    if not form.is_valid():
        return _detail(request, found, form, status=400)
    try:
        replay, _ = replays.start_replay(request.user, found, form.chosen_targets())
    except replays.ReplayRefused as refused:
        return _detail(request, found, form, str(refused), status=409)
    return redirect("jobio:replay", pk=replay.pk)


@login_required
def replay_detail(request: HttpRequest, pk: str) -> HttpResponse:
    """A replay's runs as they go (polled every 2 s), then the job's time on each."""
    replay = replays.visible_replay(request.user, pk)
    if replay is None:
        raise NotFound("No such replay of yours.")
    profile = active_profile()
    io = JobIO.from_json(replay.check_of.io)
    found = replay_figures.answer(replay, profile)
    workload = Workload.model_validate(replay.workload)
    # In the table's order (a JSON object's keys come back in the database's order).
    sized = [(row.target.name, replay.sized[row.target.key]) for row in found.rows
             if row.target.key in replay.sized]  # fmt: skip
    ctx = {
        "replay": replay,
        "io": io,
        "workload": workload,
        "answer": found,
        "reads": found.reads,
        "doing": replay_figures.doing(replay.engine, workload, found.reads),
        "sized": sized,
        "job_summary": replay_figures.job_summary(io),
        "own": replay.user_id == request.user.pk,
    }
    if request.htmx:
        response = render(request, "jobio/replay.html#replay-answer", ctx)
        return poll_answer(response, still_polling=ctx["answer"].going)
    return render(request, "jobio/replay.html", ctx)


@require_POST
@login_required
def replay_cancel(request: HttpRequest, pk: str) -> HttpResponse:
    """Cancels a replay's unfinished runs (its owner, or staff)."""
    replay = replays.visible_replay(request.user, pk)
    if replay is None:
        raise NotFound("No such replay of yours.")
    try:
        failed = cancel_all(replay.runs.all())
    except SlurmError:
        failed = 1
    if failed:
        messages.error(request, "Slurm could not cancel every run now: try again shortly.")
    else:
        messages.info(request, "The replay's unfinished runs are being cancelled.")
    return redirect("jobio:replay", pk=replay.pk)


# --- a lab run's own I/O --------------------------------------------------------


@csrf_exempt  # posted by the job script, authenticated by the run's secret
@require_POST
def run_logs(request: HttpRequest, key: str) -> HttpResponse:
    """The Darshan logs of a run, sent by its job after the result (jobio/runs.py)."""
    run = get_object_or_404(BenchmarkRun, key=key)
    token = request.headers.get("X-Storagelab-Token", "")
    try:
        content_length = request.META.get("CONTENT_LENGTH", "")
        check_post(run, token, content_length, settings.RUN_DARSHAN_MAX_BYTES)
        row = runs.receive(
            run,
            token,
            request.body,
            request.headers.get("X-Darshan-Sizes"),
            request.headers.get("X-Darshan-Missing"),
        )
    except ResultRefused as e:
        return HttpResponse(f"{e}\n", status=e.status, content_type="text/plain")
    if row.sent_at:
        read_run_logs_once_committed(run.pk)
    return HttpResponse("accepted\n", status=202, content_type="text/plain")


@login_required
def run_io(request: HttpRequest, key: str) -> HttpResponse:
    """The run page's I/O summary (a fragment it loads, polled while it may come): the
    run's owner sees it, and staff."""
    visible = runs_visible_to(request.user).defer("raw_output")
    visible = visible.select_related("target", "exercise")
    run = get_object_or_404(visible, key=key)
    shown = runs.of_run(run, checks.task_seconds())
    ctx = {"run": run, "shown": shown}
    if shown.io is not None:
        io = shown.io
        job = advice_for(io, active_profile(), ran=run.exercise.key if run.exercise else None)
        ctx |= {
            "io": io,
            "job": job,
            # "like 1a: 401 writes of 1 MiB ...": what it did, without the likeness.
            "did": job.likeness.partition(": ")[2],
            "chart": chart_data(io),
            "size_rows": size_rows(io),
        }
    response = render(request, "jobs/run_detail.html#run-io", ctx)
    return poll_answer(response, still_polling=shown.following)
