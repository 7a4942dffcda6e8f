"""manage.py replay_darshan: a log it cannot replay is refused in one line, and nothing
is started; a log it can is replayed as the user on the targets named, and --json
--wait prints each target's figures in the job's terms (on the live cluster)."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from jobio.models import JobCheck, Replay
from jobs.models import BenchmarkRun
from tests.jobio.logs import log, truncated
from tests.runs import follow


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda tmp: truncated(tmp, "random-4k", 0.6), "cut short"),
        (lambda tmp: log("no-io"), "no reads or writes of files: there is nothing to replay"),
    ],
)
def test_a_log_it_cannot_replay_is_refused_in_one_line(ada, tmp_path, make, says) -> None:
    with pytest.raises(CommandError, match=says) as refused:
        call_command("replay_darshan", str(make(tmp_path)), "--user", ada.username, "--json")
    assert "\n" not in str(refused.value)
    assert not (JobCheck.objects.exists() or Replay.objects.exists())
    assert not BenchmarkRun.objects.exists()


def test_an_unknown_login_or_target_is_named(ada) -> None:
    with pytest.raises(CommandError, match="nobody-here: no such portal login"):
        call_command("replay_darshan", str(log("random-4k")), "--user", "nobody-here")
    with pytest.raises(CommandError, match="not a target of dev: lustre"):
        call_command(
            "replay_darshan", str(log("random-4k")), "--user", ada.username, "--targets", "lustre"
        )


@pytest.mark.django_db(transaction=True)
def test_a_random_4k_job_replayed_on_three_targets_keeps_2as_lesson(
    live_portal, dev_profile, cluster_username, make_user, settings, sync_loop
) -> None:
    settings.REPLAY_SECONDS = 2  # fewer than a figure needs: each run is timed for 3
    user = make_user(cluster_username)
    out = StringIO()
    call_command(
        "replay_darshan", str(log("random-4k")), "--user", user.username,
        "--targets", "global,binfs,tmp", "--json", "--wait", "--timeout", "240", stdout=out,
    )  # fmt: skip

    answer = json.loads(out.getvalue())
    rows = {row["target"]: row for row in answer["targets"]}
    assert list(rows) == ["global", "tmp", "binfs"]  # the site's order
    for row in rows.values():
        assert row["status"] == "completed" and row["seconds"] == 3
        # The job's 64 MiB at the rate measured, and the job's I/O per replay's.
        assert row["job_io_seconds"] == pytest.approx(64 / row["mib_s"], rel=0.01, abs=0.001)
        assert row["scale"] == pytest.approx(64 / (row["mib_s"] * 3), rel=0.01, abs=0.001)
    # 2a's lesson on the dev site: memory, and SSD-like $BINFS, each at least 5× $GLOBAL.
    assert rows["tmp"]["mib_s"] >= 5 * rows["global"]["mib_s"]
    assert rows["binfs"]["mib_s"] >= 5 * rows["global"]["mib_s"]
    assert rows["global"]["job_io_seconds"] > 5 * rows["tmp"]["job_io_seconds"]
    assert answer["verdict"].startswith(("Both put", "Believe the"))  # beside the rules
    follow(*BenchmarkRun.objects.filter(user=user))  # nothing left going
