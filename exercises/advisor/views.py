"""The advisor's page: "which target should I use?", asked as a questionnaire."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from exercises.advisor import Access, FileShape, Question, advise
from exercises.advisor.facts import target_facts
from exercises.advisor.forms import AdvisorForm
from exercises.catalogue.profiles import active_profile
from exercises.weather.pages import slow_now


@login_required
def advisor(request: HttpRequest) -> HttpResponse:
    """ "Which target should I use?": a GET form, so an answer can be bookmarked."""
    profile = active_profile()
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
        advice = advise(target_facts(profile), question)
    template = "advisor/advisor.html#advice" if request.htmx else "advisor/advisor.html"
    ctx = {"profile": profile, "form": form, "advice": advice}
    if advice is not None:
        ctx["slow_now"] = slow_now(profile)  # said beside each target that reads slow now
    return render(request, template, ctx)
