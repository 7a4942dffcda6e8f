"""The weather's own pages: the reading nearest a run (a fragment the run page loads)
and, for staff, every target hour by hour for a week."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from exercises.catalogue.profiles import active_profile
from exercises.weather import canaries, pages
from jobs.access import runs_visible_to
from portal.errors import NotFound
from portal.permissions import is_staff, only_if


@login_required
def run_reading(request: HttpRequest, key: str) -> HttpResponse:
    """The run page's "while this ran, $GLOBAL read 45 % of its usual": the run's
    owner sees it, and staff (jobs/access.py), as they see the run."""
    run = (
        runs_visible_to(request.user)
        .select_related("target")
        .only("pk", "key", "engine", "target", "created_at", "started_at", "ended_at")
        .filter(key=key)
        .first()
    )
    if run is None:
        raise NotFound("No run of yours has this address: it may be another trainee's run.")
    reading = pages.nearest(run)
    ctx = {"run": run, "reading": reading, "level": pages.level(reading.ratio) if reading else ""}
    if reading is not None:
        ctx |= {
            "percent": pages.percent(reading.ratio) if reading.ratio is not None else "",
            "at": pages.when(reading.taken_at),
            "unit": pages.UNIT[reading.kind],
        }
    return render(request, "weather/run_reading.html", ctx)


@only_if(is_staff, "Only staff see every target's weather over the week.")
def heatmap(request: HttpRequest) -> HttpResponse:
    profile = active_profile()
    columns, rows = pages.heatmap(profile)
    ctx = {
        "profile": profile,
        "columns": columns,
        "rows": rows,
        "status": canaries.status(profile),
        "days": pages.HEATMAP_DAYS,
    }
    return render(request, "weather/heatmap.html", ctx)
