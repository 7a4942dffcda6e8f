"""`make bench`: five classes of 200 on two replicas of the portal and the multi-node
Slurm 24.11 cluster (docker/cluster/), written to bench/results/classes24.json.

The class of bench/test_class.py five times over: 1,000 trainees in 5 courses, all
logged in and polling at once, each class starting its runs a minute after the one
before (BENCH_CLASS_GAP_S), each with its instructor polling its overview; two web
replicas (gunicorn) and two Celery workers, each replica's users keeping to it as
behind a sticky load balancer, and one beat. The jobs go to the 24.11 cluster's two
nodes, which post their results and Darshan logs to the replica whose worker
submitted them, over the cluster's network. Each trainee runs 1a on the GlusterFS
volume and on the job's own $TMPDIR (2,000 runs). slurmrestd is reached through a link that counts
its requests by kind.

Targets (issue 29): every page p95 < 150 ms in every phase, 0 errors, every run
completed, no Slurm job id twice, no run submitted twice (one POST job/submit per
run), and one `GET /jobs` per sync cycle at most, however many replicas.

With the filesystem's weather on (issue 39): beat starts canaries on every target of
the site, the class's two among them, every BENCH_WEATHER_MINUTES (5, the least a
site may set; 0: none), as a cluster account of their own; they queue in Slurm with
the class's jobs. `canaries` in the JSON says how many started and ended, what share
of each target's time they took, and whether two ever ran at once on one target.
"""

import itertools
import os
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.contrib.auth.models import User

from bench.test_class import run_class, start_on_the_cluster, stop_on_the_cluster
from exercises.catalogue.models import StorageTarget
from exercises.weather.models import Reading
from tests.cluster24 import JWT_KEY

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]

CLASSES = int(os.getenv("BENCH_CLASSES", "5"))
CLASS_SIZE = int(os.getenv("BENCH_CLASS_SIZE", "200"))
REPLICAS = 2
# Five classes in five rooms start their runs a minute apart, not in the same 30 s.
CLASS_GAP_S = int(os.getenv("BENCH_CLASS_GAP_S", "60"))
WEATHER_MINUTES = os.getenv("BENCH_WEATHER_MINUTES", "5")
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def cluster_targets(dev_profile) -> list[StorageTarget]:
    """The class's targets: the dev site's $WORK, the cluster's GlusterFS volume (over
    the network, its bricks in the file servers' memory), and $TMPDIR as most sites
    have it, the job's own directory in its node's memory. Not the dev site's $SCRATCH:
    a loop device on this VM's disk, whose writes queue PostgreSQL's commits behind
    them, which a site's parallel filesystem, other machines, never does."""
    tmp = dev_profile.targets.get(key="tmp")
    tmp.path_template, tmp.shared = "$TMPDIR", False
    tmp.save()
    tmp.quota_source.delete()  # a job's $TMPDIR has no usage to collect between jobs
    return [dev_profile.targets.get(key="work"), tmp]


@pytest.fixture
def weather_login(make_user, cluster24_username) -> User:
    """The portal login whose cluster account (on the host and every node) the
    canaries run as."""
    return make_user(cluster24_username)


@pytest.fixture
def replicas(settings, tmp_path, cluster24, slurm_24, cluster_targets, weather_login):
    env = {
        "SLURM_JWT_KEY_FILE": str(JWT_KEY),
        "SLURM_SERVICE_USER": "slurmrestd",
        "SLURM_PARTITION": "debug",
        "WEATHER_MINUTES": WEATHER_MINUTES,
        "WEATHER_ACCOUNT": weather_login.username,
        # The cluster's launcher: its nodes claim 8 CPUs on 2 cores (the mdtest canary
        # runs 8 ranks), so no binding to cores, as tests/jobs/test_runs_24_live.py.
        "MPI_LAUNCHER": "mpirun --bind-to none",
    }
    portal, slurm = start_on_the_cluster(settings, tmp_path, REPLICAS, env)
    yield portal, slurm
    stop_on_the_cluster(portal)


def canaries(since: float) -> dict:
    """The canaries beat started during the bench: per target, how many started, gave a
    figure, failed, the seconds their jobs ran (and that as a share of the bench's
    time), and how many pairs of them ran at once on the target (must be none)."""
    # Submitted since then: the window slurmrestd's requests are counted in.
    rows = Reading.objects.filter(run__submitted_at__gte=datetime.fromtimestamp(since, UTC))
    seconds = time.time() - since
    by_target = {}
    for target in {r.target for r in rows.select_related("target")}:
        own = rows.filter(target=target).select_related("run")
        spans = sorted(
            (r.run.started_at, r.run.ended_at) for r in own if r.run.started_at and r.run.ended_at
        )
        ran = sum((b - a).total_seconds() for a, b in spans)
        by_target[f"{target.name} ({target.key})"] = {
            "started": own.count(),
            "with_a_figure": own.exclude(figure=None).count(),
            "failed": own.exclude(problem="").count(),
            "problems": sorted({f"{r.kind}: {r.problem[:120]}" for r in own if r.problem}),
            "still_going": own.filter(figure=None, problem="").count(),
            "seconds_run": round(ran, 1),
            "share_of_time": round(ran / seconds, 4),
            "two_at_once": sum(b1 > a2 for (_, b1), (a2, _) in itertools.pairwise(spans)),
        }
    return {
        "weather_minutes": int(WEATHER_MINUTES),
        "submitted": rows.exclude(run__slurm_job_id=None).count(),
        "by_target": by_target,
    }


def test_five_classes_of_200_on_two_replicas_and_slurm_24(
    replicas, cluster_targets, dev_profile, make_user, make_cluster_username, tmp_path
) -> None:
    portal, slurm = replicas

    on_nodes: list[str] = []

    def on_the_cluster(names: list[str]) -> None:
        on_nodes.extend(names)
        subprocess.run([str(ROOT / "docker/cluster/account.sh"), *names], check=True, timeout=900)

    try:
        figures = run_class(
            "classes24", portal, slurm,
            dev_profile, cluster_targets, [CLASS_SIZE] * CLASSES, make_user,
            make_cluster_username, tmp_path, accounts_ready=on_the_cluster,
            deadline_s=60 * 60, class_gap_s=CLASS_GAP_S,
            # The canaries of the same window as slurmrestd's counted requests: those of
            # the accounts' making (minutes before it) are no part of the class.
            besides=lambda counted_from: {"canaries": canaries(counted_from)},
        )  # fmt: skip
    finally:
        # Off the nodes again: a thousand stale accounts slow every one made after them.
        remove = [str(ROOT / "docker/cluster/account.sh"), "--remove", *on_nodes]
        subprocess.run(remove, check=False, timeout=900)

    by_kind = figures["slurmrestd_by_kind"]
    weather = figures["canaries"]
    print(f"  GET jobs {by_kind.get('GET jobs', 0)} in {figures['seconds']:.0f} s "
          f"(cycles at most {figures['sync_cycles_at_most']:.0f})")  # fmt: skip
    print(f"  canaries every {weather['weather_minutes']} min: {weather['submitted']} submitted")
    for name, f in weather["by_target"].items():
        print(f"    {name:9} {f}")
    # None submitted twice: one POST per run, the class's and the canaries'.
    assert by_kind.get("POST job/submit") == figures["runs_expected"] + weather["submitted"]
    if int(WEATHER_MINUTES):
        assert weather["submitted"] > 0
        assert not any(f["two_at_once"] for f in weather["by_target"].values())
    assert by_kind.get("GET jobs", 0) <= figures["sync_cycles_at_most"] + 1
    assert figures["runs_lost"] == 0
