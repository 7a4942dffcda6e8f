"""The weather where people read it, from readings made in the database: My storage
and each target's page ("now" against the usual, and 24 hours as a strip), the run
page's fragment (its owner and staff only), the staff's heatmap, and "slow now" in
the advisor and Check my job."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from exercises.weather.models import Kind
from exercises.weather.pages import slow_now, when
from tests.exercises.weather.weather import reading
from tests.jobio.logs import log
from tests.jobio.test_views import upload
from tests.runs import make_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def canary(dev_profile, make_user):
    """The site's canary account (its readings' runs are its own)."""
    return make_user("sl-weather").cluster_account


def test_my_storage_says_now_against_the_usual_and_draws_24_hours(
    client, ada, canary, dev_profile
) -> None:
    reading(canary, dev_profile, "global", 190.0, ago=timedelta(hours=3))
    latest = reading(canary, dev_profile, "global", 76.0, usual=200.0)
    reading(canary, dev_profile, "scratch", 990.0, usual=1000.0)
    client.force_login(ada)

    page = client.get("/storage/").content.decode()

    section = page[page.index('id="weather-global"') : page.index('id="weather-scratch"')]
    assert (
        f"Slow now: streaming write: 38 % of its usual (76.0 MiB/s against 200.0) at "
        f"{when(latest.taken_at)}." in section
    )
    assert "weather level-slow" in section
    strip = re.search(
        r'<div class="weather-strip" role="img" aria-label="([^"]+)">(.*?)</div>', section
    )
    assert strip and strip.group(2).count('<span class="cell') == 24
    label = strip.group(1)
    assert label.startswith("$GLOBAL, streaming write, last 24 hours by the hour:")
    assert "1 as usual" in label and "1 slow (under half its usual)" in label
    assert "22 without a reading" in label
    assert "99 % of its usual" in page  # $SCRATCH
    assert "No streaming write reading in the last 24 hours." in page  # $HOME, $TMPDIR


def test_a_reading_during_a_class_and_one_without_a_usual_say_so(
    client, ada, canary, dev_profile
) -> None:
    reading(canary, dev_profile, "global", 150.0, during_class=True)
    reading(canary, dev_profile, "tmp", 3000.0, usual=None)
    client.force_login(ada)

    page = client.get("/storage/").content.decode()

    assert "75 % of its usual (150.0 MiB/s against 200.0) at" in page
    assert "while trainees&#x27; runs were going on it." in page
    assert "3,000.0 MiB/s at" in page and "no usual figure yet (not calibrated)" in page


def test_an_old_reading_is_not_now(client, ada, canary, dev_profile) -> None:
    reading(canary, dev_profile, "global", 60.0, ago=timedelta(hours=5))
    client.force_login(ada)

    page = client.get("/storage/").content.decode()

    assert "That was a while ago: there is no reading now." in page
    assert "weather level-slow" not in page  # not slow now: not known now


def test_the_targets_page_shows_its_own_weather(client, ada, canary, dev_profile) -> None:
    reading(canary, dev_profile, "home", 19.0, usual=20.0)
    reading(canary, dev_profile, "home", 900.0, usual=1000.0, kind=Kind.METADATA)
    reading(canary, dev_profile, "global", 10.0)
    client.force_login(ada)

    page = client.get("/storage/home/").content.decode()

    assert "Streaming write: 95 % of its usual (19.0 MiB/s against 20.0)" in page
    assert "File creates: 90 % of its usual (900.0 files created/s against 1,000.0)" in page
    assert "$GLOBAL" not in page[page.index('id="weather"') :].split("</section>")[0]


def test_my_storage_keeps_its_query_budget_with_the_weather(
    client, ada_account, canary, dev_profile, django_assert_max_num_queries
) -> None:
    for key in ("home", "global", "scratch", "tmp"):
        for hours in range(0, 24, 2):
            reading(canary, dev_profile, key, 100.0, ago=timedelta(hours=hours, minutes=1))
    client.force_login(ada_account.user)

    with django_assert_max_num_queries(11):  # My storage's 7, history, scans, purge, weather
        assert client.get("/storage/").status_code == 200


def test_the_run_page_loads_the_reading_nearest_the_run(
    client, ada_account, canary, dev_profile, make_user
) -> None:
    now = timezone.now()
    global_ = dev_profile.targets.get(key="global")
    run = make_run(
        ada_account, global_, status="completed", started_at=now - timedelta(minutes=10),
        ended_at=now - timedelta(minutes=9),
    )  # fmt: skip
    reading(canary, dev_profile, "global", 190.0, ago=timedelta(minutes=30))
    near = reading(canary, dev_profile, "global", 90.0, ago=timedelta(minutes=8))
    client.force_login(ada_account.user)

    page = client.get(f"/jobs/runs/{run.key}/").content.decode()
    fragment = client.get(f"/weather/runs/{run.key}").content.decode()

    assert f'hx-get="/weather/runs/{run.key}" hx-trigger="load"' in page
    said = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", fragment))
    assert (
        f"While this ran, $GLOBAL read 45 % of its usual: its canary's streaming write gave "
        f"90.0 MiB/s at {when(near.taken_at)}, against the usual 200.0." in said
    )
    client.force_login(make_user("sl-bob"))
    assert client.get(f"/weather/runs/{run.key}").status_code == 404
    client.force_login(make_user(staff=True))
    assert "45 % of its usual" in client.get(f"/weather/runs/{run.key}").content.decode()


def test_a_run_without_a_reading_near_it_gets_an_empty_placeholder(
    client, ada_account, canary, dev_profile
) -> None:
    run = make_run(ada_account, dev_profile.targets.get(key="global"), status="completed")
    reading(canary, dev_profile, "global", 90.0, ago=timedelta(hours=3))
    client.force_login(ada_account.user)

    fragment = client.get(f"/weather/runs/{run.key}").content.decode()

    assert '<div id="run-weather"></div>' in fragment


def test_staff_see_a_week_as_a_heatmap_and_trainees_do_not(
    client, ada, canary, dev_profile, make_user, django_assert_max_num_queries, settings
) -> None:
    settings.WEATHER_MINUTES, settings.WEATHER_ACCOUNT = 15, ""  # off, and the page says why
    reading(canary, dev_profile, "global", 90.0, ago=timedelta(hours=2))
    reading(canary, dev_profile, "global", 70.0, ago=timedelta(days=3))
    reading(canary, dev_profile, "global", 10.0, ago=timedelta(days=8))  # beyond the week
    client.force_login(ada)
    assert client.get("/weather/").status_code == 403

    client.force_login(make_user(staff=True))
    with django_assert_max_num_queries(8):
        page = client.get("/weather/").content.decode()

    assert page.count('<tr><th scope="row">') == 7 * 24
    # Each figure once (its % sign apart: a phone leaves it out).
    cell = '<td class="cell level-slow">{}<span class="unit"> %</span></td>'
    assert cell.format(45) in page and cell.format(35) in page
    assert '5<span class="unit">' not in page.replace(cell.format(45), "").replace(
        cell.format(35), ""
    )
    assert "Off: WEATHER_ACCOUNT is not set" in page


def test_the_advisor_and_check_my_job_say_a_target_is_slow_now(
    client, ada, canary, dev_profile
) -> None:
    latest = reading(canary, dev_profile, "global", 76.0)
    reading(canary, dev_profile, "scratch", 600.0, usual=1000.0)  # low, not slow
    client.force_login(ada)
    question = (
        "access=sequential&file_shape=few_large&data_gib=10&node_memory_gib=24"
        "&app_memory_gib=0&must_outlive_job=on"
    )

    page = client.get(f"/advisor/?{question}").content.decode()

    said = f"$GLOBAL is slow now: it read 38 % of its usual at {when(latest.taken_at)}"
    assert said == slow_now(dev_profile)["global"]
    assert f'<li class="bad slow-now">{said}.</li>' in page
    assert "$SCRATCH is slow now" not in page and set(slow_now(dev_profile)) == {"global"}


def test_check_my_job_says_a_target_is_slow_now(
    client, make_user, vsc3, tasks_run_at_commit
) -> None:
    user = make_user()
    latest = reading(make_user("sl-weather").cluster_account, vsc3, "global", 30.0, usual=100.0)
    client.force_login(user)

    answer = upload(client, log("random-4k"))
    page = client.get(answer.url).content.decode()

    name = vsc3.targets.get(key="global").name
    said = f"{name} is slow now: it read 30 % of its usual at {when(latest.taken_at)}."
    assert f'<li class="bad slow-now">{said}</li>' in page
