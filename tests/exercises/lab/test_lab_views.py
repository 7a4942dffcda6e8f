"""The lab pages without a browser: bad input starts nothing and says why; pages
stay within a fixed number of queries however many runs there are."""

import json
import math
import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from exercises.catalogue.figures import variation
from exercises.catalogue.models import MeasuredReference, Metric, ReferenceResult, Unit
from jobs.models import BenchmarkRun, RunResult, RunStatus
from tests.htmx import poll_headers
from tests.in_turn import FOUR_TARGETS
from tests.runs import make_runs

pytestmark = pytest.mark.django_db


@pytest.fixture
def lab_user(dev_profile, make_user):
    return make_user("sl-trainee4")


def start(client: Client, *targets: str, htmx: bool = False, exercise: str = "1a"):
    headers = {"HX-Request": "true", "HX-Target": "runs-panel"} if htmx else {}
    return client.post(f"/lab/{exercise}/runs", {"targets": list(targets)}, headers=headers)


def test_it_starts_one_run_per_chosen_target(client, lab_user, dev_profile) -> None:
    client.force_login(lab_user)

    response = start(client, "scratch", "tmp")

    assert response.status_code == 302
    runs = BenchmarkRun.objects.filter(user=lab_user).order_by("target__order")
    assert [r.target.key for r in runs] == ["scratch", "tmp"]
    exercise = dev_profile.exercises.get(key="1a")
    assert all(r.exercise == exercise for r in runs)
    assert runs[0].workload == exercise.workload.model_dump(mode="json")
    assert runs[1].in_memory and not runs[0].in_memory
    page = client.get("/lab/1a/").content.decode()
    assert "Started 1a on $SCRATCH, $TMPDIR" in page


def test_an_unknown_target_is_refused_and_starts_nothing(client, lab_user) -> None:
    client.force_login(lab_user)

    response = start(client, "scratch", "../../etc")

    assert response.status_code == 400
    assert "../../etc is not a storage target of this site" in response.content.decode()
    assert not BenchmarkRun.objects.exists()
    # What was chosen stays chosen.
    assert (
        'value="scratch" id="id_targets_2" aria-invalid="true" checked' in response.content.decode()
    )


def test_an_unknown_target_through_htmx_gets_the_message_in_the_panel(client, lab_user) -> None:
    client.force_login(lab_user)

    response = start(client, "nope", htmx=True)

    page = response.content.decode()
    assert page.lstrip().startswith('<section id="runs-panel"')
    assert 'role="alert"' in page and "nope is not a storage target" in page
    assert not BenchmarkRun.objects.exists()


def test_no_target_chosen_says_so(client, lab_user) -> None:
    client.force_login(lab_user)
    assert "Choose at least one storage target" in start(client).content.decode()
    assert not BenchmarkRun.objects.exists()


def test_an_exercise_not_in_the_profile_is_a_clear_404(client, lab_user) -> None:
    client.force_login(lab_user)

    for response in (client.get("/lab/9z/"), start(client, "scratch", exercise="9z")):
        assert response.status_code == 404
        assert "no exercise &#x27;9z&#x27;" in response.content.decode()
    assert not BenchmarkRun.objects.exists()


def test_runs_beyond_the_cap_wait_for_a_free_slot(client, lab_user, dev_profile, settings) -> None:
    settings.MAX_ACTIVE_RUNS_PER_USER = 3
    make_runs(lab_user.cluster_account, dev_profile, 2, status=RunStatus.RUNNING)
    a_minute_ago = timezone.now() - timedelta(minutes=1)  # not a start just made
    BenchmarkRun.objects.filter(user=lab_user).update(created_at=a_minute_ago)
    client.force_login(lab_user)

    start(client, "home", "tmp")
    page = client.get("/lab/1a/").content.decode()

    assert "Started 1a on $HOME; 1 more waits for a free slot and starts by itself" in page
    assert BenchmarkRun.objects.get(target__key="tmp", status=RunStatus.WAITING)


def test_a_user_without_cluster_account_is_told_what_to_do(client, dev_profile, make_user):
    client.force_login(make_user())

    page = start(client, "tmp").content.decode()

    assert "no cluster account" in page
    assert not BenchmarkRun.objects.exists()


def test_the_runs_panel_polls_while_runs_are_active_and_then_stops(
    client, lab_user, dev_profile
) -> None:
    client.force_login(lab_user)
    make_runs(lab_user.cluster_account, dev_profile, 1, status=RunStatus.RUNNING)
    headers = {"HX-Request": "true", "HX-Target": "runs-panel"}

    polling = client.get("/lab/1a/", headers=headers)
    assert polling.status_code == 200 and 'hx-trigger="every 2s"' in polling.content.decode()

    BenchmarkRun.objects.update(status=RunStatus.COMPLETED)
    done = client.get("/lab/1a/", headers=headers)
    assert done.status_code == 286  # htmx stops polling
    assert "hx-trigger" not in done.content.decode()


def test_runs_that_only_wait_are_looked_at_less_often_until_one_changes(
    client, lab_user, dev_profile, settings
) -> None:
    """A thousand trainees whose runs wait for a node would poll 500 times a second."""
    client.force_login(lab_user)
    make_runs(lab_user.cluster_account, dev_profile, 1, status=RunStatus.PENDING)
    headers = {"HX-Request": "true", "HX-Target": "runs-panel"}
    just_started = client.get("/lab/1a/", headers=headers)
    BenchmarkRun.objects.update(updated_at=timezone.now() - timedelta(seconds=30))

    waiting = client.get("/lab/1a/", headers=headers | {"If-None-Match": just_started["ETag"]})
    BenchmarkRun.objects.update(status=RunStatus.RUNNING, updated_at=timezone.now())
    running = client.get("/lab/1a/", headers=headers | {"If-None-Match": waiting["ETag"]})

    assert 'hx-trigger="every 2s"' in just_started.content.decode()
    # Not a 304: the pace is in the markup, so the slower one is sent.
    assert waiting.status_code == 200 and 'hx-trigger="every 10s"' in waiting.content.decode()
    assert running.status_code == 200 and 'hx-trigger="every 2s"' in running.content.decode()


def test_the_panel_goes_on_while_a_completed_runs_figure_is_being_read(
    client, lab_user, dev_profile
) -> None:
    """Slurm may say a run completed a moment before its output is read: the panel
    that stopped then would show "–" for good."""
    client.force_login(lab_user)
    make_runs(lab_user.cluster_account, dev_profile, 1, status=RunStatus.RUNNING)
    run = BenchmarkRun.objects.get()
    run.result.delete()
    BenchmarkRun.objects.update(
        status=RunStatus.COMPLETED, result_received_at=timezone.now(), ended_at=timezone.now()
    )
    headers = {"HX-Request": "true", "HX-Target": "runs-panel"}

    reading = client.get("/lab/1a/", headers=headers)
    BenchmarkRun.objects.update(parse_error="fio JSON output has no jobs")
    unreadable = client.get("/lab/1a/", headers=headers)

    assert reading.status_code == 200 and 'hx-trigger="every 2s"' in reading.content.decode()
    assert unreadable.status_code == 286


def test_pages_stay_within_a_fixed_number_of_queries_with_1000_runs(
    client, lab_user, dev_profile, django_assert_max_num_queries
) -> None:
    make_runs(lab_user.cluster_account, dev_profile, 1000)
    run = BenchmarkRun.objects.filter(user=lab_user).first()
    client.force_login(lab_user)

    # The lab page's eleventh: whether my latest runs show the exercise's lesson; the
    # lab's pages' last: the courses of mine that closed lately (closed_courses_notice);
    # on a site not calibrated yet, where its calibration stands (one more).
    for url, budget in (("/lab/", 9), ("/lab/1a/", 13), (f"/jobs/runs/{run.key}/", 6)):
        with django_assert_max_num_queries(budget):
            assert client.get(url).status_code == 200


def test_the_comparison_shows_my_median_and_mb_beside_mib(client, lab_user, dev_profile) -> None:
    # 100..103 MiB/s over home, global, scratch, tmp
    make_runs(lab_user.cluster_account, dev_profile, 4)
    client.force_login(lab_user)

    page = client.get("/lab/1a/").content.decode()

    assert "100.0 (104.9)" in page  # $HOME: 100 MiB/s = 104.9 MB/s


def test_an_unchanged_runs_panel_is_answered_with_304(client, lab_user, dev_profile) -> None:
    client.force_login(lab_user)
    make_runs(lab_user.cluster_account, dev_profile, 1, status=RunStatus.RUNNING)
    headers = {"HX-Request": "true", "HX-Target": "runs-panel"}
    first = client.get("/lab/1a/", headers=headers)
    etag = first["ETag"]

    again = client.get("/lab/1a/", headers=headers | {"If-None-Match": etag})
    assert again.status_code == 304

    BenchmarkRun.objects.update(status=RunStatus.COMPLETED, updated_at=timezone.now())
    changed = client.get("/lab/1a/", headers=headers | {"If-None-Match": etag})
    assert changed.status_code == 286  # the news, and the end of polling
    assert "Completed" in changed.content.decode()


def test_the_panel_a_start_draws_knows_its_version_so_its_first_poll_is_a_304(
    client, lab_user
) -> None:
    """The start is a POST: the browser's cache has no ETag for the panel's URL, so
    the panel's markup carries its version. While the runs wait for their place in
    the rate limit, the first poll then costs a 304, not a redraw."""
    client.force_login(lab_user)
    started = start(client, "scratch", "tmp", htmx=True)
    headers = {"HX-Request": "true"} | poll_headers(started.content.decode())

    assert client.get("/lab/1a/", headers=headers).status_code == 304

    BenchmarkRun.objects.filter(user=lab_user).update(
        status=RunStatus.SUBMITTED, updated_at=timezone.now()
    )
    moved = client.get("/lab/1a/", headers=headers)
    assert moved.status_code == 200 and "Submitted" in moved.content.decode()
    assert {"HX-Request": "true"} | poll_headers(moved.content.decode()) != headers


def test_an_unchanged_runs_panel_costs_one_query_besides_the_login(
    client, lab_user, dev_profile, django_assert_num_queries
) -> None:
    client.force_login(lab_user)
    make_runs(lab_user.cluster_account, dev_profile, 1, status=RunStatus.RUNNING)
    headers = {"HX-Request": "true", "HX-Target": "runs-panel"}
    etag = client.get("/lab/1a/", headers=headers)["ETag"]

    with django_assert_num_queries(3):  # the session, the user, the panel's state
        assert client.get("/lab/1a/", headers=headers | {"If-None-Match": etag}).status_code == 304


def test_a_calibration_or_an_edited_reference_reaches_a_polling_panel_at_once(
    client, lab_user, dev_profile
) -> None:
    client.force_login(lab_user)
    make_runs(lab_user.cluster_account, dev_profile, 1, status=RunStatus.RUNNING)
    scratch = dev_profile.targets.get(key="scratch")
    exercise = dev_profile.exercises.get(key="1a")
    headers = {"HX-Request": "true", "HX-Target": "runs-panel"}
    etag = client.get("/lab/1a/", headers=headers)["ETag"]

    # A calibration ends (exercises/calibration/rounds.py saves its figure so).
    MeasuredReference.objects.update_or_create(
        exercise=exercise, target=scratch, metric=Metric.WRITE,
        defaults={"median": 812.3, "low": 790.1, "high": 845.0},
    )  # fmt: skip
    measured = client.get("/lab/1a/", headers=headers | {"If-None-Match": etag})
    assert measured.status_code == 200
    assert "812.3 (790.1–845.0)" in measured.content.decode()

    # The same process, which keeps the site's rows: an edit is seen at once too.
    reference = ReferenceResult.objects.create(
        exercise=exercise, target=scratch, value=1234.5, source="The site's talk, 2025"
    )
    published = client.get("/lab/1a/", headers=headers | {"If-None-Match": measured["ETag"]})
    assert published.status_code == 200
    assert "The site&#x27;s talk, 2025" in published.content.decode()
    reference.source = "Re-measured by the site, 2026"
    reference.save()
    scratch.name = "$SCRATCH (new system)"
    scratch.save()
    edited = client.get("/lab/1a/", headers=headers | {"If-None-Match": published["ETag"]})
    assert edited.status_code == 200
    assert "Re-measured by the site, 2026" in edited.content.decode()
    assert "$SCRATCH (new system)" in edited.content.decode()


def test_the_site_rows_are_read_once_per_process_not_once_per_page(
    client, lab_user, dev_profile, django_assert_max_num_queries
) -> None:
    make_runs(lab_user.cluster_account, dev_profile, 4)
    client.force_login(lab_user)
    first = client.get("/lab/1a/").content.decode()

    # The session, the user, the panel's state (my prediction with it), my runs, my
    # figures, my latest runs for the lesson and my courses that closed lately; the
    # class's come from the cache, the site's targets and references from the process.
    # On a site not calibrated yet, where its calibration stands (one query more).
    with django_assert_max_num_queries(8):
        again = client.get("/lab/1a/").content.decode()
    compared = "<h2>Compared</h2>"
    assert compared in again
    assert again.partition(compared)[2] == first.partition(compared)[2]


def test_repeated_runs_are_dots_with_their_median_and_their_spread_in_the_table(
    client, lab_user, dev_profile
) -> None:
    # three runs on each of four targets: 100+i MiB/s, i = 0..11
    make_runs(lab_user.cluster_account, dev_profile, 12, keys=FOUR_TARGETS)
    client.force_login(lab_user)

    page = client.get("/lab/1a/").content.decode()

    chart = json.loads(re.search(r'id="comparison-data"[^>]*>(.*?)</script>', page, re.S)[1])
    mine = chart["series"][0]
    labels = ["$HOME", "$GLOBAL", "$SCRATCH", "$TMPDIR", "$BINFS", "$WORK", "$PROJECT"]
    assert chart["labels"] == labels
    # Every run is a dot (no bar per statistic); the median is drawn across them.
    assert mine["kind"] == "runs" and mine["values"][0] == [100.0, 104.0, 108.0]
    assert mine["medians"] == [104.0, 105.0, 106.0, 107.0, None, None, None]
    # The table: three runs on $HOME, whose CV is stdev 4 / mean 104 = 3.8 %.
    compared = page.partition('<table class="figures">')[2]
    home = re.search(r"\$HOME</a></th>(.*?)</tr>", compared, re.S)[1]
    assert re.findall(r'<td class="num">([^<]*)</td>', home)[1:3] == ["3", "3.8 %"]


def test_one_run_has_no_spread_to_speak_of() -> None:
    assert variation([100.0]) is None
    assert variation([]) is None
    assert variation([90.0, 110.0]) == pytest.approx(0.1414, rel=1e-3)


def test_a_metadata_exercise_compares_my_rates_with_the_measured_and_published_ones(
    client, lab_user, dev_profile
) -> None:
    exercise = dev_profile.exercises.get(key="6")
    scratch = dev_profile.targets.get(key="scratch")
    for creates in (500.0, 700.0, 900.0, float("inf")):  # the last no run can give
        run = BenchmarkRun.objects.create(
            user=lab_user, cluster_username="sl-trainee4", target=scratch, exercise=exercise,
            engine="mdtest", target_directory="/x", time_limit_minutes=2, result_token_hash="x",
            workload=exercise.workload.model_dump(mode="json"), status=RunStatus.COMPLETED,
        )  # fmt: skip
        RunResult.objects.create(
            run=run, engine="mdtest", processes=8, create_ops_s=creates,
            stat_ops_s=20000.0 if math.isfinite(creates) else None,
        )  # fmt: skip
    MeasuredReference.objects.create(
        exercise=exercise, target=scratch, metric=Metric.CREATE, median=6452.0, low=1, high=1e4
    )
    ReferenceResult.objects.create(
        exercise=exercise, target=scratch, metric=Metric.CREATE, value=884, unit=Unit.OPS_S,
        source="a talk",
    )  # fmt: skip
    client.force_login(lab_user)

    page = client.get("/lab/6/").content.decode()

    compared = page.partition("Files per second, all processes together")[2]
    row = re.search(r"\$SCRATCH</a></th>(.*?)</tr>", compared, re.S)[1]
    cells = re.findall(r'<td class="num">(.*?)</td>', row, re.S)
    assert cells[0] == "3"  # my runs
    assert cells[1].startswith("700.0<br>") and "measured 6,452.0" in cells[1]
    assert "published 884 ops/s" in cells[1]
    assert cells[2] == "20,000.0" and cells[3] == "–"  # no measured or published stat
    assert 'id="comparison-data"' not in page  # no MiB/s chart for files per second


def click_of(html: str) -> str:
    return re.search(r'name="click" value="([0-9a-f]+)"', html).group(1)


def test_a_double_click_on_start_runs_starts_the_runs_once(client, lab_user) -> None:
    client.force_login(lab_user)
    page = client.get("/lab/1a/").content.decode()
    assert 'hx-disabled-elt="this">Start runs</button>' in page  # off while in flight
    click = click_of(page)
    headers = {"HX-Request": "true", "HX-Target": "runs-panel"}

    first = client.post("/lab/1a/runs", {"targets": ["tmp"], "click": click}, headers=headers)
    second = client.post("/lab/1a/runs", {"targets": ["tmp"], "click": click}, headers=headers)

    assert BenchmarkRun.objects.filter(user=lab_user).count() == 1
    assert "Started 1a on $TMPDIR" in first.content.decode()
    assert "started by your first click already" in second.content.decode()
    # The panel a start draws names the form's next click: a second start of its own.
    next_click = re.search(
        r'name="click" id="id_click" value="([0-9a-f]+)" hx-swap-oob="true"',
        first.content.decode(),
    ).group(1)
    assert next_click != click
    # A browser's double click: the second click comes after the first's answer, with
    # the new name. It asks first, and starts nothing.
    asked = client.post("/lab/1a/runs", {"targets": ["tmp"], "click": next_click}, headers=headers)
    assert BenchmarkRun.objects.filter(user=lab_user).count() == 1
    question = asked.content.decode()
    assert "You started 1a on $TMPDIR a moment ago" in question
    assert "this click started nothing. Start it once more?" in question
    # Its own small form says the same start once more, on purpose.
    again = re.search(r'<form [^>]*class="again".*?</form>', question, re.S).group(0)
    fields = dict(re.findall(r'name="(targets|repeat|again|click)" value="([^"]*)"', again))
    assert fields["targets"] == "tmp" and fields["again"] == "1" and fields["repeat"] == "1"
    client.post("/lab/1a/runs", fields, headers=headers)
    assert BenchmarkRun.objects.filter(user=lab_user).count() == 2


def test_a_start_asks_first_only_on_targets_started_within_seconds(
    client, lab_user, settings
) -> None:
    settings.START_AGAIN_SECONDS = 10
    client.force_login(lab_user)
    start(client, "tmp", htmx=True)

    other = start(client, "scratch", htmx=True).content.decode()  # another target: no question
    assert "Started 1a on $SCRATCH" in other
    BenchmarkRun.objects.filter(user=lab_user).update(
        created_at=timezone.now() - timedelta(seconds=11)
    )
    later = start(client, "tmp", "scratch", htmx=True).content.decode()  # 11 s on: none either
    assert "Started 1a on $TMPDIR, $SCRATCH" in later
    assert BenchmarkRun.objects.filter(user=lab_user).count() == 4

    without_js = start(client, "tmp").content.decode()  # the whole page asks, too
    assert "You started 1a on $TMPDIR" in without_js and 'class="again"' in without_js
    assert BenchmarkRun.objects.filter(user=lab_user).count() == 4


def test_a_run_not_yet_completed_shows_no_figure_beside_its_status(
    client, lab_user, dev_profile
) -> None:
    """A result can arrive before the sync sees the job end: no figure until then."""
    make_runs(lab_user.cluster_account, dev_profile, 1, status=RunStatus.RUNNING)
    client.force_login(lab_user)

    page = client.get("/lab/1a/").content.decode()

    row = re.search(r'<tr data-run="[^"]+">(.*?)</tr>', page, re.S).group(1)
    assert "Running" in row and "100.0" not in row
    assert re.findall(r'<td class="num">([^<]*)</td>', row) == ["–", "–"]


def test_an_empty_published_column_says_why(client, lab_user) -> None:
    client.force_login(lab_user)

    page = client.get("/lab/1a/").content.decode()

    assert "The site has published no reference figures for exercise 1a" in page
    assert "Where the site references come from" not in page


def test_a_first_look_and_a_first_start_say_the_lesson_is_to_come_without_reading_figures(
    client, lab_user, dev_profile, django_assert_max_num_queries
) -> None:
    """What a class asks at once (bench: classes24's ramp): a trainee's first look at
    1a and their first start. No run of theirs has a figure yet, so the page reads
    none (my figures, my latest runs for the lesson) and says what to run; once a
    figure is in, it says what the figures show."""
    client.force_login(lab_user)
    client.get("/lab/1a/")  # the site's rows into the process
    to_see = "Run 1a on $TMPDIR and 1a on $GLOBAL to see it."

    # The session, the user, the panel's state, my runs, my courses for the prediction
    # form and those that closed lately; on a site not calibrated yet, where its
    # calibration stands (the figures' Measured here says when they come).
    with django_assert_max_num_queries(7):
        first_look = client.get("/lab/1a/").content.decode()
    assert to_see in first_look

    started = start(client, "global", "tmp", htmx=True).content.decode()
    assert to_see in started and "Started 1a on $GLOBAL" in started

    make_runs(lab_user.cluster_account, dev_profile, 2, keys=["global", "tmp"])
    measured = client.get("/lab/1a/").content.decode()
    assert to_see not in measured
    assert "Your latest runs: 1a on $TMPDIR 101.0 MiB/s, 1a on $GLOBAL 100.0 MiB/s" in measured


def test_a_sweep_shows_my_latest_run_on_each_target_size_by_size(
    client, lab_user, dev_profile, django_assert_max_num_queries
) -> None:
    """Exercise 9's panel: a line per target over the six request sizes, from my latest
    completed run on each (its figures read with my runs: no query more), the same
    figures in a table, and the lessons judged on one size against another."""
    nine = dev_profile.exercises.get(key="9")
    sizes = [4096, 16384, 65536, 262144, 1048576, 4194304]
    mib = {
        "global": [1.6, 6.2, 25.0, 99.5, 196.0, 199.0],
        "tmp": [900.0, 2100, 3900, 4700, 5100, 5200],
    }
    for key, older in (("global", False), ("tmp", False), ("global", True)):
        run = BenchmarkRun.objects.create(
            user=lab_user, cluster_username=lab_user.cluster_account.username, exercise=nine,
            target=dev_profile.targets.get(key=key), target_directory="/x", workload={},
            time_limit_minutes=2, result_token_hash="x", status=RunStatus.COMPLETED,
            created_at=timezone.now() - timedelta(hours=1 if older else 0),
        )  # fmt: skip
        figures = [m / 2 if older else m for m in mib[key]]
        RunResult.objects.create(
            run=run, engine="fio", processes=1, write_bytes_per_s=figures[-1] * 2**20,
            series=[[size, m * 2**20] for size, m in zip(sizes, figures, strict=True)],
        )  # fmt: skip
    client.force_login(lab_user)
    client.get("/lab/9/")

    with django_assert_max_num_queries(8):
        page = client.get("/lab/9/").content.decode()

    chart = json.loads(re.search(r'id="sweep-data"[^>]*>(.*?)</script>', page, re.S)[1])
    assert chart["labels"] == ["4 KiB", "16 KiB", "64 KiB", "256 KiB", "1 MiB", "4 MiB"]
    assert [(s["label"], s["values"]) for s in chart["series"]] == [
        ("$GLOBAL", mib["global"]),  # the latest, not the older run's halves
        ("$TMPDIR", mib["tmp"]),
    ]
    assert '<th scope="row">$GLOBAL</th><td class="num">1.6</td>' in page
    assert (
        "Your latest runs: 9 on $GLOBAL at 1 MiB 196.0 MiB/s, 9 on $GLOBAL at 4 KiB 1.6 MiB/s"
        in page
    )
    assert page.count("they show it.") == 3
