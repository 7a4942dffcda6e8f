"""`make bench`: what each page of a class of 200 costs the portal by itself, one
request at a time in the test's process, written to bench/results/page_costs.json.

The class bench (test_class.py) measures pages under load, where a page's time is
mostly its wait for a core: it follows the host as much as the code. This one
measures the code: the same course (200 trainees, 1a on each of the six dev targets,
1,200 runs of which half completed), each page asked 30 times alone, its median time
and its queries; among them the two the class bench's ramp asks of each trainee (a
first look at the lab page, and a start on two targets), each after deleting that
trainee's runs (a query or five, counted in). Run at two commits on one host, it tells
a slower code from a slower host. No target: the figures are for reading beside class.json.
"""

import statistics
import time
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from bench.conftest import write_results
from exercises.courses.models import Course, Enrollment
from exercises.lab import start
from jobs.models import BenchmarkRun, RunStatus
from tests.courses import add_run, make_instructor
from tests.htmx import poll_headers, poll_url

pytestmark = pytest.mark.django_db

TRAINEES = 200
REQUESTS = 30
HTMX = {"HX-Request": "true"}


def costs(ask) -> dict:
    """The median time of REQUESTS answers, and the queries of one."""
    seconds = []
    for _ in range(REQUESTS):
        started = time.perf_counter()
        answer = ask()
        seconds.append(time.perf_counter() - started)
    with CaptureQueriesContext(connection) as queries:
        ask()
    return {
        "status": answer.status_code,
        "median_ms": round(statistics.median(seconds) * 1000, 1),
        "queries": len(queries),
        "query_ms": round(sum(float(q["time"]) for q in queries) * 1000, 1),
    }


def test_what_each_page_of_a_class_of_200_costs(
    dev_profile, make_user, make_cluster_username, monkeypatch
) -> None:
    # A start's runs are saved, not sent: what is measured is the page.
    monkeypatch.setattr(start, "enqueue_once_committed", lambda runs: None)
    targets = list(dev_profile.targets.all())
    instructor = make_instructor(make_user)
    course = Course.objects.create(title="Costs", profile=dev_profile, max_active_runs=len(targets))
    course.instructors.add(instructor)
    course.exercises.set(dev_profile.exercises.filter(key="1a"))
    course.targets.set(targets)
    trainees = [make_user(make_cluster_username()) for _ in range(TRAINEES + 1)]
    Enrollment.objects.bulk_create(Enrollment(course=course, user=t) for t in trainees)
    newcomer = trainees.pop()  # starts runs, again and again
    for i, trainee in enumerate(trainees):
        for j, target in enumerate(targets):
            state = (i + j) % 4  # half completed, a quarter running, a quarter pending
            if state < 2:
                add_run(trainee.cluster_account, course, "1a", target.key, 500.0 + i)
            else:
                status = RunStatus.RUNNING if state == 2 else RunStatus.PENDING
                add_run(trainee.cluster_account, course, "1a", target.key, None, status)

    # Started an hour ago: a panel's pace (and so its version) stays as it is.
    an_hour_ago = timezone.now() - timedelta(hours=1)
    runs = BenchmarkRun.objects.filter(course=course)
    runs.update(created_at=an_hour_ago, updated_at=an_hour_ago)

    teacher, trainee, starter = Client(), Client(), Client()
    teacher.force_login(instructor)
    trainee.force_login(trainees[5])
    starter.force_login(newcomer)
    overview = f"/courses/{course.pk}/overview"
    page = teacher.get(overview).content.decode()
    poll, held = poll_url(page), poll_headers(page)
    panel_version = poll_headers(trainee.get("/lab/1a/", headers=HTMX).content.decode())
    one_run = runs.first()

    def overview_moved():
        BenchmarkRun.objects.filter(pk=one_run.pk).update(updated_at=timezone.now())
        return teacher.get(poll, headers=HTMX | held)

    def start_runs(on=targets):
        BenchmarkRun.objects.filter(user=newcomer).delete()
        form = {"targets": [t.key for t in on], "click": uuid.uuid4().hex}
        return starter.post("/lab/1a/runs", form, headers=HTMX)

    def first_look():
        BenchmarkRun.objects.filter(user=newcomer).delete()
        return starter.get("/lab/1a/")

    # In this order: once a run has moved (overview_moved), the next class refresh
    # (every CLASS_REFRESH_SECONDS) brings its change to every panel, whose version then
    # changes: the panel's 304 is asked before any run moves.
    pages = {
        "lab page": lambda: trainee.get("/lab/1a/"),
        "runs panel poll, unchanged (304)": lambda: trainee.get(
            "/lab/1a/", headers=HTMX | panel_version
        ),
        "runs panel poll, redrawn": lambda: trainee.get("/lab/1a/", headers=HTMX),
        "overview page": lambda: teacher.get(overview),
        "overview poll, a run moved": overview_moved,
        f"start of {len(targets)} runs": start_runs,
        # What the class bench's ramp asks of each trainee (test_classes_24.py): the
        # page with no run yet (the prediction form on it), and a start on two targets.
        "lab page, first look": first_look,
        "start of 2 runs, the first": lambda: start_runs(targets[:2]),
    }
    figures = {name: costs(ask) for name, ask in pages.items()}
    write_results(
        "page_costs",
        {
            "measured_at": datetime.now(UTC).isoformat(),
            "trainees": TRAINEES,
            "runs": runs.count(),
            "pages": figures,
        },
    )
    print("\nWhat each page of a class of 200 costs, alone (bench/results/page_costs.json):")
    for name, f in figures.items():
        print(
            f"  {name:34} {f['median_ms']:6.1f} ms, {f['queries']:2} queries "
            f"({f['query_ms']:.1f} ms), HTTP {f['status']}"
        )
    assert figures["runs panel poll, unchanged (304)"]["status"] == 304
    assert all(f["status"] == 200 for name, f in figures.items() if "304" not in name)
