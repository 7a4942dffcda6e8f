"""The weather for real, on the dev cluster: a tiny calibration of the canaries'
exercises (1a and 6, once on every target), then `manage.py weather --once --json`
gives every dev target a figure and a ratio to its usual; then, beside a job of
another user's streaming to $GLOBAL, $GLOBAL's canary reads under half its usual and
My storage says it is slow now."""

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


def test_a_round_reads_every_target_and_global_is_slow_beside_a_writer(
    sync_loop, dev_profile, make_cluster_username, make_user, slurm_client, client, settings
) -> None:
    canary = make_user(make_cluster_username(), staff=True)
    settings.WEATHER_ACCOUNT = canary.username
    settings.WEATHER_MINUTES = 15  # what a round's cost is a share of (make test sets 0)
    call_command(
        "calibrate", "--user", canary.username, "--repeat", "1", "--exercises", "1a,6",
        "--wait", "--timeout", "300", stdout=io.StringIO(),
    )  # fmt: skip

    quiet = weather("--once", "--timeout", "300")

    assert set(quiet["targets"]) == set(dev_profile.targets.values_list("key", flat=True))
    for key, entry in quiet["targets"].items():
        for kind in ("streaming", "metadata"):
            reading = entry[kind]
            assert reading["figure"] > 0 and reading["usual"] > 0, (key, kind, reading)
            assert reading["ratio"] == pytest.approx(reading["figure"] / reading["usual"], 1e-3)
    assert quiet["targets"]["global"]["streaming"]["ratio"] > 0.5
    assert max(quiet["cost"]["share"].values()) < 0.05, quiet["cost"]  # of 15 minutes

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
    settings.WEATHER_METADATA_EXERCISE = ""  # the streaming canary alone, while they write

    busy = weather("--once", "--targets", "global", "--timeout", "120")

    slurm_client.cancel(writer, job_id)
    # The figures for the record (pytest -s): what a round cost each target, and the ratios.
    print("weather cost:", json.dumps(quiet["cost"]), "busy $GLOBAL:", busy["targets"]["global"])
    streaming = busy["targets"]["global"]["streaming"]
    assert streaming["ratio"] < 0.5, busy
    client.force_login(make_user())
    page = client.get("/storage/").content.decode()
    section = page[page.index('id="weather-global"') : page.index('id="weather-scratch"')]
    assert "Slow now: streaming write: " in section and "weather level-slow" in section
    readings = 2 * dev_profile.targets.count() + 1  # a quiet round of both kinds, one busy
    assert Reading.objects.filter(figure__isnull=False).count() == readings
    stored = weather()
    assert stored["kept"] == readings and stored["targets"]["global"]["streaming"] == streaming
