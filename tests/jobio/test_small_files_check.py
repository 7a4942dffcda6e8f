"""Check my job on a log of many small files (fio writing 1,000 files of 16 KiB, each
in one request): the page names it so, quotes exercise 3's figures (many small files),
never 2a's, and draws no order of requests, which one request a file does not have."""

import re

import pytest
from django.utils import timezone

from exercises.catalogue.models import MeasuredReference
from tests.jobio.logs import log
from tests.jobio.test_views import upload

pytestmark = pytest.mark.django_db


def measure(profile, exercise: str, figures: dict[str, float]) -> None:
    for target, mib_s in figures.items():
        MeasuredReference.objects.create(
            exercise=profile.exercises.get(key=exercise),
            target=profile.targets.get(key=target),
            values=[mib_s] * 3,
            median=mib_s,
            low=mib_s,
            high=mib_s,
            measured_at=timezone.now(),
        )


def checked(client, make_user) -> str:
    client.force_login(make_user())
    page = client.get(upload(client, log("small-files")).url).content.decode()
    return re.sub(r"\s+", " ", page)


def test_it_is_named_many_small_files_and_ranked_by_exercise_3s_figures(
    client, make_user, dev_profile, tasks_run_at_commit
) -> None:
    measure(dev_profile, "2a", {"tmp": 900.0, "global": 1.5, "scratch": 7.0, "home": 0.6})
    measure(dev_profile, "3", {"tmp": 310.0, "global": 3.1, "scratch": 41.0, "home": 0.4})

    page = checked(client, make_user)

    assert "<h1>Job 31512: many small files</h1>" in page
    assert re.search(r"Exercise 3: 310(\.0)? MiB/s", page)  # $TMPDIR's, as measured
    assert "in exercise 3 (" in page  # the speed-up's source
    # 2a's figure and words: 900 as a figure, not as digits of a token or an id.
    assert not re.search(r"(?<![\w.,-])900(\.0)?(?![\w.,])", page), page
    assert "random 4 KiB writes" not in page


def test_without_figures_of_exercise_3_it_says_so_rather_than_quote_2a(
    client, make_user, dev_profile, tasks_run_at_commit
) -> None:
    measure(dev_profile, "2a", {"tmp": 900.0, "global": 1.5})

    page = checked(client, make_user)

    assert "No exercise 3 figure for $TMPDIR yet, so its facts alone rank it." in page
    assert "900" not in page and "random 4 KiB writes" not in page


def test_one_request_a_file_draws_no_order_of_requests(
    client, make_user, dev_profile, tasks_run_at_commit
) -> None:
    page = checked(client, make_user)

    assert 'id="jobio-access"' not in page and "Order of requests" not in page
    assert '"access": null' in page  # nothing for the script to draw either
    assert "no order to judge: each file was written in one request" in page
