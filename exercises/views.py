from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseNotModified
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseStopPolling

from exercises import courses, lab
from exercises.advisor import Access, FileShape, Question, advise
from exercises.forms import AdvisorForm, StartRunsForm
from exercises.models import Exercise
from exercises.quota.checks import quota_problem
from jobs import services
from jobs.models import ACTIVE_STATUSES, BenchmarkRun
from portal.models import ClusterAccount


@login_required
def exercise_list(request: HttpRequest) -> HttpResponse:
    profile = lab.active_profile()
    ctx = {"profile": profile, "progress": lab.progress(profile, request.user)}
    return render(request, "exercises/exercise_list.html", ctx)


@login_required
def exercise_detail(request: HttpRequest, key: str) -> HttpResponse:
    exercise = lab.get_exercise(key)
    if request.htmx:
        return _runs_panel(request, exercise)
    form = StartRunsForm(profile=exercise.profile)
    return _page(request, exercise, form)


@require_POST
@login_required
def exercise_start(request: HttpRequest, key: str) -> HttpResponse:
    exercise = lab.get_exercise(key)
    form = StartRunsForm(request.POST, profile=exercise.profile)
    notice = _start_runs(request, exercise, form)
    failed = notice["level"] == "error"
    if request.htmx:
        ctx = _panel_context(request, exercise) | {"notice": notice}
        return render(request, "exercises/exercise_detail.html#runs-panel", ctx)
    if failed:
        return _page(request, exercise, form, notice, status=400)
    messages.info(request, notice["text"])
    return redirect("exercises:exercise-detail", key=exercise.key)


def _page(
    request: HttpRequest, exercise: Exercise, form: StartRunsForm, notice=None, status=200
) -> HttpResponse:
    ctx = _panel_context(request, exercise) | {"form": form, "notice": notice}
    return render(request, "exercises/exercise_detail.html", ctx, status=status)


def _runs_panel(request: HttpRequest, exercise: Exercise) -> HttpResponse:
    # A class polls every 2 s: most polls change nothing, and the browser's cache
    # answers them from a 304 without the panel being rendered again.
    etag = f'"{lab.panel_version(exercise, request.user)}"'
    if request.headers.get("If-None-Match") == etag:
        return HttpResponseNotModified(headers={"ETag": etag})
    ctx = _panel_context(request, exercise)
    response = render(request, "exercises/exercise_detail.html#runs-panel", ctx)
    if not ctx["polling"]:
        # Nothing left to follow: this last answer is shown, and polling stops.
        response.status_code = HttpResponseStopPolling.status_code
    else:
        response["ETag"] = etag
        response["Cache-Control"] = "private, no-cache"
    return response


def _panel_context(request: HttpRequest, exercise: Exercise) -> dict:
    runs = lab.my_runs(exercise, request.user)
    figures = lab.comparison(exercise, request.user)
    return {
        "exercise": exercise,
        "runs": runs,
        "figures": figures,
        "chart": lab.chart_data(figures),
        "polling": any(run.status in ACTIVE_STATUSES for run in runs),
    }


def _start_runs(request: HttpRequest, exercise: Exercise, form: StartRunsForm) -> dict:
    """Starts one run per chosen target, or none at all; says which, and why."""
    account = ClusterAccount.objects.select_related("user").filter(user=request.user).first()
    if account is None:
        return _error(
            "Your portal login has no cluster account, so no job can run for you. "
            "Ask your instructor or the HPC support team to link one."
        )
    if not form.is_valid():
        return _error(" ".join(form.errors.get("targets", ["Invalid choice."])))
    targets = form.chosen_targets()
    active = BenchmarkRun.objects.filter(user=request.user, status__in=ACTIVE_STATUSES).count()
    limit = settings.MAX_ACTIVE_RUNS_PER_USER
    if active + len(targets) > limit:
        return _error(
            f"You have {active} run(s) still going and asked for {len(targets)} more; at most "
            f"{limit} may run at once. Wait for some to finish, or cancel one, then try again."
        )
    problems = [quota_problem(account, target, exercise.workload) for target in targets]
    if any(problems):
        return _error(" ".join(p for p in problems if p))
    course_for = courses.open_courses_for(request.user, exercise, targets)
    plan = [(target, course_for[target.pk]) for target in targets]
    for course in {course for _, course in plan if course}:
        asked = sum(1 for _, c in plan if c == course)
        going = courses.active_runs_in(course, request.user)
        if going + asked > course.max_active_runs:
            return _error(
                f"In {course.title} each trainee may have {course.max_active_runs} run(s) "
                f"going at once; you have {going} and asked for {asked} more. Wait for some "
                "to finish, then try again."
            )
    for target, course in plan:
        services.start_run(
            account,
            target,
            exercise.workload,
            engine=exercise.profile.engine,
            time_limit_minutes=exercise.time_limit_minutes,
            exercise=exercise,
            course=course,
        )
    names = ", ".join(t.name for t in targets)
    return {"level": "info", "text": f"Started {exercise.key} on {names}. Results appear below."}


def _error(text: str) -> dict:
    return {"level": "error", "text": text}


@login_required
def target_detail(request: HttpRequest, key: str) -> HttpResponse:
    profile = lab.active_profile()
    target = lab.get_target(profile, key)
    ctx = {"target": target, "rows": lab.target_figures(target, request.user)}
    return render(request, "exercises/target_detail.html", ctx)


@login_required
def advisor(request: HttpRequest) -> HttpResponse:
    """ "Which target should I use?": a GET form, so an answer can be bookmarked."""
    profile = lab.active_profile()
    form = AdvisorForm(request.GET or None, initial={"node_memory_gib": profile.node_memory_gib})
    advice = None
    if form.is_valid():
        question = Question(
            access=Access(form.cleaned_data["access"]),
            file_shape=FileShape(form.cleaned_data["file_shape"]),
            data_gib=form.cleaned_data["data_gib"],
            node_memory_gib=form.cleaned_data["node_memory_gib"],
            app_memory_gib=form.cleaned_data["app_memory_gib"] or 0,
            must_outlive_job=form.cleaned_data["must_outlive_job"],
            shared_between_nodes=form.cleaned_data["shared_between_nodes"],
            file_count=form.cleaned_data["file_count"],
        )
        advice = advise(lab.target_facts(profile), question)
    template = "exercises/advisor.html#advice" if request.htmx else "exercises/advisor.html"
    return render(request, template, {"profile": profile, "form": form, "advice": advice})
