"""IOR and mdtest for real, through the portal: a trainee starts the dev site's IOR
and mdtest exercises from the lab page on disk and tmpfs; the jobs run the IOR and
mdtest the dev cluster builds (docker/slurm/ior.sh), 8 ranks through the site's
MPI_LAUNCHER, and the parsed figures carry the right rank counts. About 40 s."""

import json
from pathlib import Path

import pytest
from django.test import Client

from exercises.catalogue.models import SiteProfile
from jobs.engines.base import MiB, Pattern, Workload
from jobs.figures import shown
from jobs.models import BenchmarkRun, RunStatus
from jobs.submission import start_run
from portal.models import ClusterAccount
from tests.cluster import on_controller
from tests.runs import follow

pytestmark = pytest.mark.django_db(transaction=True)

TARGETS = ["scratch", "tmp"]  # disk and tmpfs


def start_from_the_lab(client: Client, key: str) -> list[BenchmarkRun]:
    before = set(BenchmarkRun.objects.values_list("pk", flat=True))
    response = client.post(f"/lab/{key}/runs", {"targets": TARGETS})
    assert response.status_code == 302, response.content.decode()[:500]
    return list(BenchmarkRun.objects.exclude(pk__in=before).order_by("target__order"))


def assert_completed(run: BenchmarkRun) -> None:
    assert run.status == RunStatus.COMPLETED, (
        f"{run.exercise.key} on {run.target.key}: {run.status} "
        f"{run.status_reason or run.parse_error} {run.raw_output[-800:]}"
    )


@pytest.fixture
def lab_client(live_portal, dev_profile: SiteProfile, trainee_account: ClusterAccount) -> Client:
    client = Client()
    client.force_login(trainee_account.user)
    return client


def test_1a_1b_2a_2b_with_ior_on_disk_and_tmpfs_with_1_and_8_ranks(lab_client) -> None:
    runs = [
        run
        for key in ("1a-ior", "1b-ior", "2a-ior", "2b-ior")
        for run in start_from_the_lab(lab_client, key)
    ]
    assert len(runs) == 8

    for run in follow(*runs, timeout=120):
        assert_completed(run)
        ranks = run.exercise.processes
        assert run.engine == run.result.engine == "ior"
        assert run.result.processes == ranks
        assert run.result.write_mib_s > 0 and run.result.write_iops > 0
        assert run.result.read_bytes_per_s is None  # write only
        # IOR itself counted the ranks it ran with.
        assert (
            json.loads(run.raw_output[run.raw_output.index("{") :])["tests"][0]["Options"]["tasks"]
            == ranks
        )
        assert run.in_memory == (run.target.key == "tmp")
        assert not Path(run.run_directory).exists()


def test_a_file_per_process_a_shared_file_and_mdtest_on_disk_and_tmpfs(lab_client) -> None:
    fpp, shared, metadata = (start_from_the_lab(lab_client, key) for key in ("5a", "5b", "6"))

    done = follow(*fpp, *shared, *metadata, timeout=120)

    by_key: dict[str, list[BenchmarkRun]] = {}
    for run in done:
        assert_completed(run)
        assert run.result.processes == 8
        by_key.setdefault(run.exercise.key, []).append(run)
    for key, access in (("5a", "file-per-process"), ("5b", "single-shared-file")):
        for run in by_key[key]:
            assert run.result.write_mib_s > 0 and run.result.read_mib_s > 0
            assert f'"access": "{access}"' in run.raw_output
    for run in by_key["6"]:
        result = run.result
        assert run.engine == result.engine == "mdtest"
        assert result.create_ops_s > 0 and result.stat_ops_s > 0
        assert result.read_ops_s > 0 and result.remove_ops_s > 0
        assert result.write_bytes_per_s is None
        assert "8 tasks, 1600 files" in run.raw_output
    # The trainee's pages show the rates.
    lab_page = lab_client.get("/lab/6/").content.decode()
    assert "Creates/s" in lab_page and "operations per second" in lab_page
    run_page = lab_client.get(f"/jobs/runs/{by_key['6'][0].key}/").content.decode()
    assert "Files per second" in run_page
    assert shown(by_key["6"][0].result.create_ops_s) in run_page  # as pages write a figure


def test_mpi_io_ranks_spread_over_both_nodes_write_one_shared_file_in_turns(
    live_portal, dev_profile, trainee_account
) -> None:
    """8a and 8b on $WORK, which both nodes mount: four ranks on each node; in
    $TMPDIR, a node's own memory, all eight on one."""
    client = Client()
    client.force_login(trainee_account.user)
    runs = []
    for key in ("8a", "8b"):
        response = client.post(f"/lab/{key}/runs", {"targets": ["work", "tmp"]})
        assert response.status_code == 302, response.content.decode()[:500]
        runs += BenchmarkRun.objects.filter(exercise__key=key, user=trainee_account.user)

    for run in follow(*runs, timeout=150):
        assert_completed(run)
        options = json.loads(run.raw_output[run.raw_output.index("{") :])["tests"][0]["Options"]
        assert (options["api"], options["tasks"], run.result.processes) == ("MPIIO", 8, 8)
        assert options["type"] == ("collective" if run.exercise.key == "8b" else "independent")
        assert (options["segments"], options["xfersize"], options["blocksize"]) == (
            2048,
            "4096 bytes",
            "4096 bytes",
        )
        # Each rank's pieces in one call, through a file view.
        assert "--mpiio.useFileView" in run.job_script
        assert options["access"] == "single-shared-file"
        # IOR counted the nodes its ranks ran on, as Slurm placed them.
        on_two = run.target.key == "work"
        assert (options["nodes"], options["clients per node"]) == ((2, 4) if on_two else (1, 8))
        assert (run.node_names == "slurm-n[1-2]") == on_two, run.node_names


def mpi_plugins() -> str:
    """What `srun --mpi=list` offers on the dev cluster."""
    listed = on_controller("srun", "--mpi=list")
    return listed.stdout + listed.stderr


def test_srun_as_the_launcher_starts_the_ranks_where_slurm_has_pmix(
    live_portal, trainee_account, tmpfs_target, settings
) -> None:
    settings.MPI_LAUNCHER = ["srun", "--mpi=pmix"]
    workload = Workload(
        pattern=Pattern.SEQUENTIAL, block_size=1 * MiB, processes=8, size_per_process=2 * MiB
    )
    run = start_run(trainee_account, tmpfs_target, workload, engine="ior", time_limit_minutes=2)

    (run,) = follow(run)

    assert "srun --mpi=pmix -n 8 ior" in run.job_script
    if "pmix" in mpi_plugins():  # Slurm 24.11 from Debian
        assert_completed(run)
        assert run.result.processes == 8 and run.result.write_mib_s > 0
    else:
        # Debian's Slurm 26.05 has no mpi/pmix plugin (pmi2 only, which Open MPI 5 and
        # later do not speak): a site configured so fails every MPI run, and each says
        # srun's own words (its launcher must be mpirun, as the dev site's is).
        assert run.status == RunStatus.FAILED
        assert "Invalid MPI type 'pmix'" in run.raw_output, run.raw_output[-800:]
