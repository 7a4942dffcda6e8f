"""Courses: joining, the checklist, the instructor overview and exports, and who may
see what (a matrix over every course view)."""

import csv
import io
import json
import re
import time
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone
from django.utils.html import escape

from exercises.courses.models import Course, Enrollment
from jobs.models import BenchmarkRun, RunResult, RunStatus
from tests.courses import add_run, make_course

pytestmark = pytest.mark.django_db


VIEWS = {
    "checklist": "/courses/{pk}/",
    "overview": "/courses/{pk}/overview",
    "discussion": "/courses/{pk}/discussion/1a",
    "csv": "/courses/{pk}/export.csv",
    "json": "/courses/{pk}/export.json",
}
# Who gets the page (True) or a 404 (False).
ALLOWED = {
    "instructor": {"checklist", "overview", "discussion", "csv", "json"},
    "staff": {"checklist", "overview", "discussion", "csv", "json"},
    "trainee": {"checklist"},
    "classmate": {"checklist"},
    "other instructor": set(),
    "outsider": set(),
}


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("who", ALLOWED)
def test_who_may_see_each_course_view(client: Client, people, who, view) -> None:
    client.force_login(people[who])

    response = client.get(VIEWS[view].format(pk=people["course"].pk))

    assert response.status_code == (200 if view in ALLOWED[who] else 404)


@pytest.mark.parametrize("view", VIEWS)
def test_anonymous_users_are_sent_to_log_in(client: Client, people, view) -> None:
    response = client.get(VIEWS[view].format(pk=people["course"].pk))
    assert response.status_code == 302 and "/login/" in response["Location"]


@pytest.mark.parametrize("action", ["cancel", "reset"])
@pytest.mark.parametrize(
    "who,allowed",
    [("instructor", True), ("staff", True), ("other instructor", False), ("trainee", False)],
)
def test_who_may_cancel_or_reset_a_trainees_runs(client, people, who, allowed, action) -> None:
    course, trainee = people["course"], people["trainee"]
    client.force_login(people[who])

    response = client.post(
        f"/courses/{course.pk}/participants/{trainee.pk}/{action}", {"confirmed": "yes"}
    )

    assert response.status_code == (302 if allowed else 404)
    still_in_course = BenchmarkRun.objects.filter(course=course, user=trainee).exists()
    assert still_in_course == (not allowed or action == "cancel")


def test_a_trainee_sees_class_figures_without_names(client, people) -> None:
    client.force_login(people["trainee"])

    page = client.get(f"/courses/{people['course'].pk}/").content.decode()

    assert "110.0" in page  # the median of 100 and 120 MiB/s
    assert people["classmate"].username not in page
    assert "✓ done" in page  # 1a on $TMPDIR


def test_the_lab_shows_the_class_median_only_to_the_class(client, people, settings) -> None:
    settings.CLASS_REFRESH_SECONDS = 0  # the class as it is now, not at the last refresh
    client.force_login(people["trainee"])
    page = client.get("/lab/1a/").content.decode()
    assert "110.0" in page
    # Whose medians the class figure is the median of: the trainee's and a classmate's.
    assert '110.0<br><small class="muted">of 2 trainees</small>' in page
    client.force_login(people["outsider"])
    assert "110.0" not in client.get("/lab/1a/").content.decode()


@pytest.mark.parametrize(
    "exercise,medians",
    [("1a", {"$SCRATCH": None, "$TMPDIR": 110.0}), ("2a", {"$SCRATCH": 40.0, "$TMPDIR": None})],
)
def test_each_exercise_is_discussed_with_its_own_figures(client, people, exercise, medians) -> None:
    course = people["course"]
    for mib in (30, 50):
        add_run(people["classmate"].cluster_account, course, "2a", "scratch", mib)
    client.force_login(people["instructor"])

    page = client.get(f"/courses/{course.pk}/discussion/{exercise}").content.decode()

    chart = json.loads(re.search(rf'id="class-{exercise}"[^>]*>(.*?)</script>', page, re.S)[1])
    runs = chart["series"][0]
    assert runs["label"] == "Class (each trainee's median)" and runs["kind"] == "runs"
    assert dict(zip(chart["labels"], runs["medians"], strict=True)) == medians
    questions = course.exercises.get(key=exercise).questions
    assert questions and all(escape(q) in page for q in questions)


def test_the_overview_shows_every_participant_and_flags_outliers(client, people) -> None:
    course = people["course"]
    for mib in (110, 115, 2000):
        add_run(people["classmate"].cluster_account, course, "1a", "scratch", mib)
    add_run(people["trainee"].cluster_account, course, "1a", "scratch", 5)
    client.force_login(people["instructor"])

    page = client.get(f"/courses/{course.pk}/overview?exercise=1a").content.decode()

    assert people["trainee"].username in page and people["classmate"].username in page
    assert page.count("far from the class median") >= 1
    assert course.join_code in page


def test_a_participants_name_shows_as_text_in_the_grid(client, people, make_user) -> None:
    """The grid's rows are built in Python (courses.rows_html): a login name from a
    site's identity provider may hold markup, and it must stay text."""
    course = people["course"]
    odd = make_user()
    odd.username = '<img src=x onerror="alert(1)">&co'
    odd.save()
    Enrollment.objects.create(course=course, user=odd)
    client.force_login(people["instructor"])

    page = client.get(f"/courses/{course.pk}/overview").content.decode()

    assert escape(odd.username) in page
    assert "<img src=x" not in page
    assert page.count("no cluster account") == 1  # only the odd one has none


def test_the_overview_reads_as_much_for_a_class_of_30_as_for_one_of_2(
    client, people, make_user, django_assert_max_num_queries
) -> None:
    """Polled every 3 s by the instructor of a class of 200: the queries do not grow
    with the class (a session, the user, whether they may still teach (their own
    permissions and their groups'), the course, the grid's version (3), the course's
    exercises, targets and runs, its participants, the class's predictions and the
    site's two references; on a site not calibrated yet, where its calibration stands)."""
    course = people["course"]
    client.force_login(people["instructor"])
    url = f"/courses/{course.pk}/overview"
    with django_assert_max_num_queries(16):
        small = client.get(url, headers=HTMX)
    for n in range(28):
        trainee = make_user()
        Enrollment.objects.create(course=course, user=trainee)
        run = add_run(people["trainee"].cluster_account, course, "1a", "scratch", 100 + n)
        BenchmarkRun.objects.filter(pk=run.pk).update(user=trainee)  # no account each
    with django_assert_max_num_queries(16):
        large = client.get(url, headers=HTMX)
    assert small.status_code == large.status_code == 200
    rows = [page.content.decode().count('<th scope="row">') for page in (small, large)]
    assert rows[1] - rows[0] == 28


def test_the_csv_export_has_one_row_per_run(client, people) -> None:
    course = people["course"]
    client.force_login(people["instructor"])

    response = client.get(f"/courses/{course.pk}/export.csv")

    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert response["Content-Disposition"].endswith('.csv"')
    assert sorted((r["participant"], r["write_mib_s"]) for r in rows) == sorted(
        [(people["trainee"].username, "100.0"), (people["classmate"].username, "120.0")]
    )
    assert {r["target"] for r in rows} == {"$TMPDIR"}
    assert all(r["exercise"] == "1a" and r["slurm_job_id"] == "4242" for r in rows)


def test_the_json_export_matches_the_csv(client, people) -> None:
    client.force_login(people["instructor"])
    body = json.loads(client.get(f"/courses/{people['course'].pk}/export.json").content)
    assert body["course"] == "Storage 101"
    assert sorted(r["write_mb_s"] for r in body["runs"]) == [104.86, 125.83]


def test_a_formula_in_a_name_is_defused_in_the_csv(client, people, make_user) -> None:
    course = people["course"]
    sneaky = make_user("sl-trainee8")
    sneaky.username = "=HYPERLINK(1)"
    sneaky.save()
    add_run(sneaky.cluster_account, course, "1a", "tmp", 50)
    client.force_login(people["instructor"])

    text = client.get(f"/courses/{course.pk}/export.csv").content.decode()

    assert "'=HYPERLINK(1)" in text


def test_joining_with_a_code_enrolls_and_shows_the_checklist(client, people, make_user) -> None:
    newcomer = make_user("sl-trainee9")
    client.force_login(newcomer)

    response = client.post("/courses/join", {"join_code": people["course"].join_code.lower()})

    assert response.status_code == 302
    assert Enrollment.objects.filter(course=people["course"], user=newcomer).exists()
    assert "You joined Storage 101" in client.get(response["Location"]).content.decode()


@pytest.mark.parametrize(
    "case,message",
    [
        ("unknown code", "No course has that join code"),
        ("closed", "is not open for joining now"),
        ("no cluster account", "has no cluster account"),
    ],
)
def test_joining_explains_what_went_wrong(client, people, make_user, case, message) -> None:
    course = people["course"]
    user = make_user(None if case == "no cluster account" else "sl-trainee9")
    code = "NOPE1234" if case == "unknown code" else course.join_code
    if case == "closed":
        course.closes_at = timezone.now() - timedelta(minutes=1)
        course.save()
    client.force_login(user)

    response = client.post("/courses/join", {"join_code": code}, follow=True)

    assert message in response.content.decode()
    assert not Enrollment.objects.filter(user=user).exists()


def test_an_instructor_creates_a_course_and_a_trainee_cannot(client, people, dev_profile):
    form = {
        "title": "Storage 102",
        "exercises": ["1a", "1b"],
        "targets": ["tmp"],
        "max_active_runs": 2,
    }
    client.force_login(people["trainee"])
    assert client.post("/courses/new", form).status_code == 403

    client.force_login(people["instructor"])
    response = client.post("/courses/new", form)

    course = Course.objects.get(title="Storage 102")
    assert response["Location"] == f"/courses/{course.pk}/overview"
    assert [e.key for e in course.exercises.all()] == ["1a", "1b"]
    assert list(course.instructors.all()) == [people["instructor"]]


def test_runs_started_in_the_lab_count_for_the_course_and_wait_beyond_its_cap(
    client, people
) -> None:
    course = people["course"]
    course.max_active_runs = 1
    course.save()
    client.force_login(people["trainee"])

    client.post("/lab/2a/runs", {"targets": ["tmp"]})
    waits = client.post("/lab/2a/runs", {"targets": ["scratch"]}, follow=True)

    runs = BenchmarkRun.objects.filter(user=people["trainee"], exercise__key="2a")
    assert [(r.target.key, r.course, r.status) for r in runs.order_by("created_at")] == [
        ("tmp", course, RunStatus.QUEUED),
        ("scratch", course, RunStatus.WAITING),
    ]
    assert "Your 1 run of 2a waits for a free slot" in waits.content.decode()
    # A target outside the course's lab runs outside the course.
    client.post("/lab/2a/runs", {"targets": ["home"]})
    assert BenchmarkRun.objects.get(user=people["trainee"], target__key="home").course is None


def test_each_run_counts_for_the_first_open_course_joined_that_teaches_its_target(
    client, people, dev_profile
) -> None:
    trainee = people["trainee"]  # in "Storage 101" (scratch, tmp) since the fixture
    closed = make_course(dev_profile, people["instructor"], "Closed, joined before")
    closed.closes_at = timezone.now() - timedelta(minutes=1)
    closed.save()
    later = make_course(dev_profile, people["instructor"], "Joined later")
    later.targets.set(dev_profile.targets.filter(key__in=["home", "tmp"]))
    a_day_ago = timezone.now() - timedelta(days=1)
    Enrollment.objects.create(course=closed, user=trainee, joined_at=a_day_ago)
    Enrollment.objects.create(course=later, user=trainee)
    client.force_login(trainee)

    client.post("/lab/2a/runs", {"targets": ["home", "scratch", "tmp", "global"]})

    runs = BenchmarkRun.objects.filter(user=trainee, exercise__key="2a")
    assert {run.target.key: run.course for run in runs} == {
        "home": later,  # only the later course teaches it
        "scratch": people["course"],
        "tmp": people["course"],  # both do: the one joined first
        "global": None,  # no course teaches it
    }


def test_a_start_of_four_runs_in_a_course_stays_within_its_queries(
    client, people, django_assert_max_num_queries
) -> None:
    """The start of runs is the slowest page of a class's ramp: its queries are
    counted, so one more does not slip in unnoticed."""
    course = people["course"]
    course.targets.set(course.profile.targets.all())
    course.max_active_runs = 4
    course.save()
    client.force_login(people["trainee"])
    targets = {"targets": ["home", "global", "scratch", "tmp"], "click": "c1c4"}
    # The session and the user, the panel's state before and after, the rules and
    # the runs saved (with the test's savepoints), the panel drawn: 24 before the
    # course lookup took one query and an all-queued click skipped the waiting count,
    # 22 before runs that fit were saved queued rather than saved waiting and promoted,
    # 19 before the click was remembered (one UPDATE) and the panel said whether my
    # latest runs show the exercise's lesson (one query).
    with django_assert_max_num_queries(21):
        started = client.post("/lab/2a/runs", targets, headers=HTMX)
    assert "Started 2a on $HOME, $GLOBAL, $SCRATCH, $TMPDIR" in started.content.decode()


def test_a_run_counts_for_no_closed_course(client, people) -> None:
    course = people["course"]
    course.closes_at = timezone.now() - timedelta(minutes=1)
    course.save()
    client.force_login(people["trainee"])

    client.post("/lab/2a/runs", {"targets": ["tmp"]})

    assert BenchmarkRun.objects.get(user=people["trainee"], exercise__key="2a").course is None


HTMX = {"HX-Request": "true"}


def test_my_panel_takes_in_the_class_results_every_refresh_not_every_move(
    client, people, settings
) -> None:
    """A classmate's run moving never redraws my panel; their result does, at the
    next class refresh (my own runs redraw it at once: see test_lab_views)."""
    settings.CLASS_REFRESH_SECONDS = 3600
    course, classmate = people["course"], people["classmate"]
    client.force_login(people["trainee"])
    add_run(
        people["trainee"].cluster_account, course, "1a", "scratch", None, status=RunStatus.RUNNING
    )
    etag = client.get("/lab/1a/", headers=HTMX)["ETag"]
    theirs = add_run(
        classmate.cluster_account, course, "1a", "scratch", None, status=RunStatus.PENDING
    )
    BenchmarkRun.objects.filter(pk=theirs.pk).update(
        status=RunStatus.RUNNING, updated_at=timezone.now()
    )
    assert client.get("/lab/1a/", headers=HTMX | {"If-None-Match": etag}).status_code == 304

    result = RunResult.objects.create(
        run=theirs, engine="fio", processes=1, write_bytes_per_s=2**30
    )
    BenchmarkRun.objects.filter(pk=theirs.pk).update(status=RunStatus.COMPLETED)
    assert client.get("/lab/1a/", headers=HTMX | {"If-None-Match": etag}).status_code == 304

    RunResult.objects.filter(pk=result.pk).update(
        created_at=timezone.now() - timedelta(seconds=3601)  # a refresh has passed since
    )
    redrawn = client.get("/lab/1a/", headers=HTMX | {"If-None-Match": etag})
    assert redrawn.status_code == 200
    assert "1,024.0" in redrawn.content.decode()  # the class median on $SCRATCH


def strict_json(text: str):
    """JSON as a browser's JSON.parse reads it: NaN and Infinity are not JSON."""

    def refuse(constant: str):
        raise ValueError(f"{constant} in JSON")

    return json.loads(text, parse_constant=refuse)


def test_one_impossible_figure_in_the_database_breaks_no_page_or_export(
    client, people, settings
) -> None:
    """Parsers refuse such figures; rows from before they did must not break a class."""
    settings.CLASS_REFRESH_SECONDS = 0  # the lab's class figures as they are now
    course, classmate = people["course"], people["classmate"]
    for bad in (float("nan"), float("inf"), -5.0, 1e20):
        run = add_run(classmate.cluster_account, course, "1a", "tmp", 1)
        RunResult.objects.filter(run=run).update(write_bytes_per_s=bad, write_iops=bad)

    client.force_login(people["instructor"])
    overview = client.get(f"/courses/{course.pk}/overview").content.decode()
    chart = re.search(r'id="class-1a"[^>]*>(.*?)</script>', overview, re.S)[1]
    class_runs = strict_json(chart)["series"][0]
    assert class_runs["values"] == [[], [100.0, 120.0]]  # the others left out
    assert class_runs["medians"] == [None, 110.0]
    assert client.get(f"/courses/{course.pk}/discussion/1a").status_code == 200
    exported = strict_json(client.get(f"/courses/{course.pk}/export.json").content)
    assert sorted(r["write_mib_s"] or 0 for r in exported["runs"]) == [0, 0, 0, 0, 100.0, 120.0]
    assert client.get(f"/courses/{course.pk}/export.csv").status_code == 200

    client.force_login(people["trainee"])
    lab = client.get("/lab/1a/").content.decode()
    comparison = re.search(r'id="comparison-data"[^>]*>(.*?)</script>', lab, re.S)[1]
    compared = strict_json(comparison)
    tmpdir = compared["labels"].index("$TMPDIR")
    assert compared["series"][1]["medians"][tmpdir] == 110.0  # the class's, on $TMPDIR
    assert client.get(f"/courses/{course.pk}/").status_code == 200


def test_the_export_has_mdtests_rates_and_a_read_back_figure(client, people) -> None:
    course = people["course"]
    course.exercises.add(course.profile.exercises.get(key="6"))
    metadata = add_run(people["trainee"].cluster_account, course, "6", "tmp", None)
    RunResult.objects.create(
        run=metadata, engine="mdtest", processes=8, create_ops_s=5208.28, stat_ops_s=29409.1,
        read_ops_s=36436.6, remove_ops_s=12140.6,
    )  # fmt: skip
    BenchmarkRun.objects.filter(pk=metadata.pk).update(engine="mdtest")
    read_back = add_run(people["classmate"].cluster_account, course, "1a", "scratch", 50)
    RunResult.objects.filter(run=read_back).update(read_bytes_per_s=200 * 2**20)
    client.force_login(people["instructor"])

    body = json.loads(client.get(f"/courses/{course.pk}/export.json").content)

    mdtest = next(r for r in body["runs"] if r["exercise"] == "6")
    assert mdtest["engine"] == "mdtest" and mdtest["write_mib_s"] is None
    assert [mdtest[f"{op}_ops_s"] for op in ("create", "stat", "read", "remove")] == [
        5208.3, 29409.1, 36436.6, 12140.6,
    ]  # fmt: skip
    fio = next(r for r in body["runs"] if r["target"] == "$SCRATCH")
    assert (fio["write_mib_s"], fio["read_mib_s"], fio["create_ops_s"]) == (50.0, 200.0, None)
    header = client.get(f"/courses/{course.pk}/export.csv").content.decode().splitlines()[0]
    assert header.endswith(
        "engine,read_mib_s,create_ops_s,stat_ops_s,read_ops_s,remove_ops_s,predicted_place,"
        "shared_with_runs,percent_of_quiet"
    )


def test_a_metadata_exercise_shows_the_class_median_rates_not_a_bandwidth_chart(
    client, people
) -> None:
    course = people["course"]
    course.exercises.add(course.profile.exercises.get(key="6"))
    for who, creates in (("trainee", 5000.0), ("classmate", 7000.0)):
        run = add_run(people[who].cluster_account, course, "6", "tmp", None)
        RunResult.objects.create(
            run=run, engine="mdtest", processes=8, create_ops_s=creates, stat_ops_s=29409.1
        )
    # A row no mdtest can have written (stored by hand, or before parsers refused one):
    # beyond 10^8 creates per second and process. It counts in no median, no run count.
    forged = add_run(people["trainee"].cluster_account, course, "6", "tmp", None)
    RunResult.objects.create(run=forged, engine="mdtest", processes=8, create_ops_s=1e12)
    client.force_login(people["instructor"])

    page = client.get(f"/courses/{course.pk}/overview?exercise=6").content.decode()

    assert 'id="class-6"' not in page  # no MiB/s chart for files per second
    rates = page.partition("Files per second of the class's runs of 6")[2].partition("</table>")[0]
    tmp = re.search(r"\$TMPDIR</th>(.*?)</tr>", rates, re.S)[1]
    assert re.findall(r'<td class="num">([^<]*)</td>', tmp) == [
        "2",
        "6,000.0",
        "29,409.1",
        "–",
        "–",
    ]


def test_with_my_runs_done_the_panel_follows_the_class_until_its_last_run_ends(
    client, people, settings
) -> None:
    """The class median follows the class without a reload: once my runs are done, the
    panel polls at the pace the class's figures refresh while a classmate still has a
    run going, and stops with the class's last run; outside a course it stops at once."""
    settings.CLASS_REFRESH_SECONDS = 1
    course = people["course"]
    theirs = add_run(
        people["classmate"].cluster_account, course, "1a", "tmp", None, RunStatus.RUNNING
    )
    client.force_login(people["trainee"])
    time.sleep(1.1)  # a class refresh since the course's runs

    page = client.get("/lab/1a/").content.decode()
    assert 'hx-trigger="every 1s"' in page
    first = client.get("/lab/1a/", headers=HTMX)
    assert first.status_code == 200  # not 286: htmx goes on looking
    assert ">110.0<" in first.content.decode()  # the class median of 100 and 120
    # The classmate's result comes in and their run ends: my panel shows the result at
    # its next look, and that look is the last.
    RunResult.objects.create(run=theirs, engine="fio", processes=1, write_bytes_per_s=140 * 2**20)
    BenchmarkRun.objects.filter(pk=theirs.pk).update(status=RunStatus.COMPLETED)
    time.sleep(1.1)
    last = client.get("/lab/1a/", headers=HTMX | {"If-None-Match": first["ETag"]})
    # Each trainee counts once: 100, and the classmate's median of 120 and 140.
    assert last.status_code == 286 and ">115.0<" in last.content.decode()

    client.force_login(people["outsider"])
    assert "hx-trigger" not in client.get("/lab/1a/").content.decode()
