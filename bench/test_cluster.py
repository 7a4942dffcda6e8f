"""`make bench`: the dev site's exercises on the multi-node Slurm 24.11 cluster
(docker/cluster/), on its filesystem over the network (a GlusterFS volume distributed
over two file servers, mounted with FUSE on both nodes) and on each job's own $TMPDIR
(the node's memory); written to bench/results/cluster.json.

1. 1a against 1b on the network filesystem, BENCH_CLUSTER_PAIRS pairs (default 10),
   which first alternating. Target (issue 29): 8 writers beat one in at least 9 of 10,
   as on the seed's parallel filesystems (the files spread over the bricks).
2. 1a, 2a, 5a, 5b and 6 on both targets, BENCH_CLUSTER_RUNS runs each (default 3):
   the median, lowest and highest (MiB/s written; 6: files created a second).
"""

import os
import statistics
from datetime import UTC, datetime

import pytest

from bench.conftest import write_results
from exercises.catalogue.models import StorageTarget
from exercises.lab.start import start_exercise_run
from jobs.models import RunStatus
from tests.runs import follow

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]

PAIRS = int(os.getenv("BENCH_CLUSTER_PAIRS", "10"))
RUNS = int(os.getenv("BENCH_CLUSTER_RUNS", "3"))
FIGURES = ("1a", "2a", "5a", "5b", "6")


def figure(run) -> float | None:
    if run.status != RunStatus.COMPLETED or not hasattr(run, "result"):
        return None
    r = run.result
    return r.create_ops_s if run.engine == "mdtest" else r.write_mib_s


def one_run(account, exercise, target) -> float | None:
    (run,) = follow(start_exercise_run(account, exercise, target), timeout=240)
    return figure(run)


def spread(values: list[float | None]) -> dict:
    got = [v for v in values if v]
    return {
        "runs": values,
        "median": statistics.median(got) if got else None,
        "lowest": min(got, default=None),
        "highest": max(got, default=None),
    }


def test_the_dev_exercises_on_a_network_filesystem_and_a_nodes_own_tmpdir(
    portal_on_24, settings, dev_profile, cluster24_username, make_user
) -> None:
    settings.MPI_LAUNCHER = ["mpirun", "--bind-to", "none"]  # 4 CPUs claimed on 2 cores
    trainee_account = make_user(cluster24_username).cluster_account
    targets = {
        "network": StorageTarget.objects.create(
            profile=dev_profile, key="netfs", name="$NETFS", filesystem="GlusterFS",
            path_template="/gluster/{user}", order=90,
        ),
        "node $TMPDIR": StorageTarget.objects.create(
            profile=dev_profile, key="nodetmp", name="$TMPDIR", filesystem="tmpfs",
            path_template="$TMPDIR", in_memory=True, persistent=False, shared=False, order=91,
        ),
    }  # fmt: skip
    exercise = {e.key: e for e in dev_profile.exercises.all()}

    pairs = []
    for i in range(PAIRS):
        order = ("1a", "1b") if i % 2 == 0 else ("1b", "1a")
        got = {key: one_run(trainee_account, exercise[key], targets["network"]) for key in order}
        pairs.append(got)
    wins = sum(1 for p in pairs if p["1a"] and p["1b"] and p["1b"] > p["1a"])

    figures = {
        f"{key} / {name}": spread(
            [one_run(trainee_account, exercise[key], target) for _ in range(RUNS)]
        )
        for key in FIGURES
        for name, target in targets.items()
    }
    path = write_results(
        "cluster",
        {
            "measured_at": datetime.now(UTC).isoformat(),
            "cluster": "Slurm 24.11, 2 nodes (docker/cluster/)",
            "pairs_1a_1b_network": pairs,
            "1b_beats_1a": f"{wins} of {PAIRS}",
            "figures": figures,
            "units": "MiB/s written; 6: files created per second",
        },
    )
    print(f"\n1b beats 1a on the network filesystem in {wins} of {PAIRS} pairs ({path})")
    for p in pairs:
        print(f"  1a {p['1a']:.1f}  1b {p['1b']:.1f}  ({p['1b'] / p['1a']:.2f}x)")
    for side, f in figures.items():
        print(f"  {side}: median {f['median']:.1f} ({f['lowest']:.1f}-{f['highest']:.1f})")
    assert wins >= PAIRS * 9 // 10
    assert all(f["median"] for f in figures.values()), figures
