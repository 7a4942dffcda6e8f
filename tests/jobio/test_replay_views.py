"""Replay my job's pages: only a check's owner replays it, only the owner and staff see
a replay, a refusal is said on the check's page, and a form with no target or a target
of no site starts nothing. No job reaches the cluster: nothing here commits."""

import pytest
from django.urls import reverse

from jobio.models import Replay
from jobs.models import BenchmarkRun
from tests.jobio.logs import checked
from tests.jobio.replayed import measured

pytestmark = pytest.mark.django_db


def start(client, check, targets):
    return client.post(reverse("jobio:replay-start", args=[check.pk]), {"targets": targets})


def test_the_owner_starts_a_replay_and_is_taken_to_it(client, ada, dev_profile) -> None:
    client.force_login(ada)
    check = checked(ada)
    page = client.get(reverse("jobio:detail", args=[check.pk]))
    assert b"Replay on every target" in page.content

    answer = start(client, check, ["home", "tmp"])

    replay = Replay.objects.get(user=ada)
    assert answer.status_code == 302 and answer.url == reverse("jobio:replay", args=[replay.pk])
    shown = client.get(answer.url)
    assert shown.status_code == 200
    assert [r.target.key for r in shown.context["answer"].rows] == ["home", "tmp"]
    assert b"What the replay kept" in shown.content


def test_no_one_else_replays_a_check_or_sees_a_replay_and_staff_only_look(
    client, ada, make_user, dev_profile
) -> None:
    check = checked(ada)
    other, staff = make_user("sl-other"), make_user("sl-staff", staff=True)
    client.force_login(ada)
    start(client, check, ["home"])
    replay = Replay.objects.get()

    client.force_login(other)
    assert start(client, check, ["home"]).status_code == 404
    assert client.get(reverse("jobio:replay", args=[replay.pk])).status_code == 404
    assert client.post(reverse("jobio:replay-cancel", args=[replay.pk])).status_code == 404

    client.force_login(staff)
    assert client.get(reverse("jobio:replay", args=[replay.pk])).status_code == 200
    page = client.get(reverse("jobio:detail", args=[check.pk]))
    assert b"Replay on every target" not in page.content  # it would run as staff's account
    assert start(client, check, ["home"]).status_code == 404
    assert Replay.objects.count() == 1 and BenchmarkRun.objects.count() == 1


@pytest.mark.parametrize(
    ("targets", "says"),
    [([], "Choose at least one storage target"), (["lustre"], "lustre is not a storage target")],
)
def test_a_bad_form_starts_nothing_and_says_why(client, ada, dev_profile, targets, says) -> None:
    client.force_login(ada)
    answer = start(client, checked(ada), targets)
    assert answer.status_code == 400 and says in answer.content.decode()
    assert not Replay.objects.exists()


def test_a_refusal_is_said_on_the_checks_page(client, ada, dev_profile) -> None:
    client.force_login(ada)
    start(client, checked(ada), ["home"])
    answer = start(client, checked(ada, "sequential-1m"), ["home"])
    assert answer.status_code == 409
    assert "A replay of yours is still running" in answer.content.decode()


def test_the_page_sets_both_verdicts_side_by_side_and_says_read_for_a_job_that_read(
    client, ada, dev_profile, settings
) -> None:
    settings.REPLAY_SECONDS = 3
    client.force_login(ada)
    start(client, checked(ada, "read-1m"), ["global", "scratch", "tmp"])
    replay = Replay.objects.get()
    measured(replay, {"global": 200, "scratch": 900, "tmp": 5000}, field="read_bytes_per_s")

    page = client.get(reverse("jobio:replay", args=[replay.pk])).content.decode()

    assert "lays its data out with fio before the clock starts, then reads it" in page
    assert "MiB/s read" in page and "MiB/s written" not in page
    assert 'id="verdict-rules"' in page and 'id="verdict-replay"' in page
    assert page.count("· believed") in (1, 2)  # one verdict, or both where they agree
    assert 'id="replay-verdict"' in page


def test_a_run_too_short_to_rank_is_shown_and_says_why(client, ada, dev_profile, settings) -> None:
    settings.REPLAY_SECONDS = 3
    client.force_login(ada)
    start(client, checked(ada, "small-files"), ["global", "tmp"])
    replay = Replay.objects.get()
    measured(replay, {"global": 250, "tmp": 30_000}, field="create_ops_s")

    page = client.get(reverse("jobio:replay", args=[replay.pk])).content.decode()

    assert "too short to rank: it was timed for 33 ms" in page
    assert "How each target's run was sized" in page
    assert "It ranks nothing (below)." in page
