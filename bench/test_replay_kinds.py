"""`make bench`: Replay my job on the live dev cluster, for the three kinds of log the issue names
(issue 57, item 4), on all seven targets, one replay after another as one user:

- fio's 2 GiB stream in 1 MiB writes: every run timed for its 3 s, and the page sets
  the rules' first choice beside the replay's fastest, with which to believe;
- a job that only read 512 MiB: replayed as reads of data laid out first, past the
  page cache: on $HOME and $GLOBAL, whose devices are capped at 20 and 200 MiB/s each
  way, the reads come back at the cap, not at memory's speed; the page says "read";
- fio's 1,000 small files: mdtest within the bound of files at once, each target's
  rounds sized by exercise 6's creates measured on it just before (as a calibration
  round would), so that every run is timed for 3 s or more.

Each target's seconds are printed (pytest -s) and written to
bench/results/replay_kinds.json. make test replays each kind on two or three targets
(tests/e2e/test_replay_my_job.py, test_check_small_files.py); this, on all seven, one
after another, takes about six minutes.
"""

import statistics

import pytest
from django.urls import reverse

from bench.conftest import write_results
from exercises.catalogue.models import MeasuredReference, Metric
from exercises.lab.start import start_exercise_run
from jobio.models import Replay
from jobio.replay import MIN_SECONDS
from jobio.replay_figures import answer
from jobio.replays import start_replay
from jobs.models import BenchmarkRun, RunStatus
from tests.jobio.logs import checked
from tests.runs import follow

pytestmark = pytest.mark.django_db(transaction=True)

# What each kind's runs measured, per target: written to bench/results/replay_kinds.json.
MEASURED: dict[str, dict[str, dict]] = {}


def replayed(user, name: str, profile) -> Replay:
    replay, _ = start_replay(user, checked(user, name), list(profile.targets.order_by("order")))
    follow(*replay.runs.all(), timeout=900)
    return replay


def printed(name: str, found) -> None:
    print(f"\n{name}: {found.verdict}")
    MEASURED[name] = {"verdict": found.verdict, "targets": {}}
    for row in found.rows:
        seconds = "–" if row.seconds is None else f"{row.seconds:.2f} s"
        rate = row.ops_s or row.read_mib_s or row.mib_s
        MEASURED[name]["targets"][row.target.key] = {
            "status": row.run.status,
            "timed_s": row.seconds,
            "rate": rate,
            "job_io_s": row.job_io_seconds,
            "ranks": row.ranks,
        }
        print(
            f"  {row.target.key:8} {row.run.status:9} timed {seconds:>8}  rate {rate or 0:>10,.1f}"
            f"  job {row.job_io_seconds or 0:>8.2f} s  {row.short or 'ranks'}"
        )


def test_a_stream_a_read_only_log_and_small_files_each_replay_for_3_s_or_say_why(
    live_portal, dev_profile, cluster_username, make_user, settings, sync_loop, client
) -> None:
    settings.REPLAY_SECONDS = MIN_SECONDS
    settings.REPLAY_MAX_BYTES = 256 * 2**20
    user = make_user(cluster_username)
    client.force_login(user)
    targets = list(dev_profile.targets.order_by("order"))

    stream = replayed(user, "sequential-1m", dev_profile)
    found = answer(stream, dev_profile)
    printed("stream", found)
    assert all(row.run.status == RunStatus.COMPLETED and row.ranks for row in found.rows)
    assert {row.seconds for row in found.rows} == {MIN_SECONDS}
    assert found.beside is not None and found.beside.replay is not None
    assert found.verdict.startswith(("Both put", "Believe the rules", "Believe the replay"))

    reads = replayed(user, "read-1m", dev_profile)
    found = answer(reads, dev_profile)
    printed("read-only", found)
    rows = {row.target.key: row for row in found.rows}
    assert all(row.ranks and row.mib_s is None and row.read_mib_s for row in found.rows)
    # Past the page cache: each capped device gives its cap, not memory's GiB/s.
    assert rows["home"].read_mib_s <= 20 * 1.3 and rows["global"].read_mib_s <= 200 * 1.3
    assert rows["tmp"].read_mib_s > 5 * rows["global"].read_mib_s  # memory is the storage
    page = client.get(reverse("jobio:replay", args=[reads.pk])).content.decode()
    assert "MiB/s read" in page and "lays its data out with fio before the clock" in page

    # Exercise 6 on every target, in turn, as a calibration round measures it.
    six = dev_profile.exercises.get(key="6")
    runs = follow(*[start_exercise_run(user.cluster_account, six, t) for t in targets], timeout=600)
    for run in runs:
        creates = run.result.create_ops_s
        MeasuredReference.objects.create(
            exercise=six, target=run.target, metric=Metric.CREATE,
            values=[creates], median=creates, low=creates, high=creates,
        )  # fmt: skip
    small = replayed(user, "small-files", dev_profile)
    found = answer(small, dev_profile)
    printed("small files", found)
    for run in small.runs.all():
        workload = run.workload_params
        assert workload.files_per_process * workload.processes <= settings.REPLAY_MAX_FILES
    ranked = [row for row in found.rows if row.ranks]
    assert all(row.seconds >= MIN_SECONDS for row in ranked)
    # Sized by the figures, every target's run lasts 3 s or more.
    assert len(ranked) == len(targets), [row.short for row in found.rows if row.short]
    made = {}
    for row in found.rows:
        workload = row.run.workload_params
        made[row.target.key] = (workload.iterations, workload.files_per_process)
    assert made["tmp"][0] > 1, made  # memory makes files fastest: made again and again
    print("  rounds, files:", made, "median timed", statistics.median(r.seconds for r in ranked))
    assert not BenchmarkRun.objects.filter(user=user, status__in=["waiting", "queued"]).exists()
    write_results("replay_kinds", MEASURED)
