"""The weather for real, on the dev cluster. `manage.py weather --once --json` reads
every dev target, both kinds, within its cost, before any calibration (no usual yet,
and the page says so). Then, alone on the cluster, a tiny calibration of $GLOBAL's
streaming canary (1a, once): quiet, the canary reads about its usual; beside a job of
another user's streaming to $GLOBAL from both nodes, under half of it, and My storage
says $GLOBAL is slow now."""

import io
import json
import time

import pytest
from django.core.management import call_command

from exercises.weather.models import Reading
from jobs.slurm.models import JobState
from tests.cluster import trivial_job
from tests.conftest import DISK_ROOT

pytestmark = pytest.mark.django_db(transaction=True)

# Three writers past the page cache for 40 s at most, on each node: $GLOBAL's device
# takes 200 MiB/s from each node (one client's link: the cap is each node's), so a
# canary beside them, on either node, gets about a quarter of it.
LOAD = """end=$((SECONDS + 40))
for i in 1 2 3; do
  ( while [ $SECONDS -lt $end ]; do
      dd if=/dev/zero of=load-$SLURM_PROCID-$i bs=1M count=128 oflag=direct conv=fsync status=none
    done; rm -f load-$SLURM_PROCID-$i ) &
done
wait"""
ON_EVERY_NODE = f"srun --ntasks-per-node=1 bash -c '{LOAD}'"


def weather(*options: str) -> dict:
    out = io.StringIO()
    call_command("weather", "--json", *options, stdout=out)
    return json.loads(out.getvalue())


@pytest.fixture
def canary(make_cluster_username, make_user, settings):
    """The staff login (with a cluster account of its own) the canaries run as, and a
    round's cost counted as a share of 15 minutes (make test turns the schedule off)."""
    user = make_user(make_cluster_username(), staff=True)
    settings.WEATHER_ACCOUNT = user.username
    settings.WEATHER_MINUTES = 15
    return user


def globals_weather(client, make_user) -> str:
    """$GLOBAL's weather on My storage, as a trainee reads it."""
    client.force_login(make_user())
    page = client.get("/storage/").content.decode()
    return page[page.index('id="weather-global"') : page.index('id="weather-scratch"')]


def test_a_round_reads_every_target_both_kinds_within_its_cost(
    sync_loop, dev_profile, canary, make_user, client
) -> None:
    round_ = weather("--once", "--timeout", "300")

    assert set(round_["targets"]) == set(dev_profile.targets.values_list("key", flat=True))
    for key, entry in round_["targets"].items():
        for kind in ("streaming", "metadata"):
            reading = entry[kind]
            assert reading["figure"] > 0, (key, kind, reading)
            assert reading["usual"] is None and reading["ratio"] is None, (key, kind, reading)
    # What the round cost each target, as a share of 15 minutes (bounded on a quiet
    # cluster in the test below; here other tests' jobs run beside it).
    assert set(round_["cost"]["share"]) == set(round_["targets"]), round_["cost"]
    assert all(share > 0 for share in round_["cost"]["share"].values()), round_["cost"]
    print("weather cost:", json.dumps(round_["cost"]))  # for the record (pytest -s)
    assert "no usual figure yet (not calibrated)" in globals_weather(client, make_user)
    readings = 2 * dev_profile.targets.count()
    assert weather()["kept"] == Reading.objects.filter(figure__isnull=False).count() == readings


@pytest.mark.alone("measures $GLOBAL quiet, then beside a writer of its own")
def test_global_reads_its_usual_when_quiet_and_slow_beside_a_writer(
    sync_loop, dev_profile, canary, make_cluster_username, make_user, slurm_client, client, settings
) -> None:
    settings.WEATHER_METADATA_EXERCISE = ""  # the streaming canary alone
    call_command(
        "calibrate", "--user", canary.username, "--repeat", "1", "--exercises", "1a",
        "--targets", "global", "--wait", "--timeout", "120", stdout=io.StringIO(),
    )  # fmt: skip

    quiet = weather("--once", "--targets", "global", "--timeout", "120")

    reading = quiet["targets"]["global"]["streaming"]
    assert reading["usual"] > 0
    assert reading["ratio"] == pytest.approx(reading["figure"] / reading["usual"], 1e-3)
    assert reading["ratio"] > 0.5, quiet
    assert quiet["cost"]["share"]["global"] < 0.05, quiet["cost"]  # of 15 minutes

    writer = make_cluster_username()
    directory = DISK_ROOT / "global" / writer
    spec = trivial_job(directory, ON_EVERY_NODE).model_copy(
        update={"working_directory": str(directory), "nodes": 2, "tasks": 2}
    )
    job_id = slurm_client.submit(writer, spec)
    deadline = time.monotonic() + 30
    while slurm_client.job(writer, job_id).state != JobState.RUNNING:
        assert time.monotonic() < deadline, "the writer did not start"
        time.sleep(0.5)
    time.sleep(3)  # the writers under way

    busy = weather("--once", "--targets", "global", "--timeout", "120")

    slurm_client.cancel(writer, job_id)
    # The figures for the record (pytest -s): $GLOBAL quiet and busy.
    print("quiet $GLOBAL:", reading, "busy $GLOBAL:", busy["targets"]["global"])
    streaming = busy["targets"]["global"]["streaming"]
    assert streaming["ratio"] < 0.5, busy
    section = globals_weather(client, make_user)
    assert "Slow now: streaming write: " in section and "weather level-slow" in section
    assert Reading.objects.filter(figure__isnull=False).count() == 2  # quiet, then busy
    stored = weather()
    assert stored["kept"] == 2 and stored["targets"]["global"]["streaming"] == streaming
