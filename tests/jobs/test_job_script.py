"""How a job script starts its benchmark: an MPI benchmark's ranks through the site's
launcher (MPI_LAUNCHER), one rank and fio on their own, every word shell-quoted."""

import shlex
import subprocess

import pytest

from jobs.engines.base import KiB, MiB, Pattern, Workload
from jobs.scripts import DARSHAN_FILES, files_needed, job_spec, render_script
from tests.runs import make_run

pytestmark = pytest.mark.django_db


def workload(processes: int, **changes: object) -> dict:
    fields: dict = {
        "pattern": Pattern.SEQUENTIAL,
        "block_size": 1 * MiB,
        "processes": processes,
        "size_per_process": 4 * MiB,
    }
    return Workload(**(fields | changes)).model_dump(mode="json")


def command_line(script: str, program: str) -> list[str]:
    """The words of the script's line that runs `program`, after the variables it sets
    for it (Darshan's, where the site records runs)."""
    lines = script.replace("\\\n", " ").splitlines()
    line = next(line for line in lines if f"{program} " in line and ">" in line)
    words = shlex.split(line.partition(">")[0])
    while words and "=" in words[0] and not words[0].startswith("-"):
        words.pop(0)
    return words


def test_eight_ior_ranks_start_through_the_launcher_with_their_count(
    trainee_account, disk_target, settings
) -> None:
    settings.MPI_LAUNCHER = ["mpirun"]
    run = make_run(trainee_account, disk_target, engine="ior", workload=workload(8))

    words = command_line(render_script(run), "ior")

    assert words[:4] == ["mpirun", "-n", "8", "ior"]
    assert job_spec(run, "#!/bin/bash\n", "token").tasks == 8


def test_the_launcher_is_the_sites_setting(trainee_account, disk_target, settings) -> None:
    settings.MPI_LAUNCHER = ["srun", "--mpi=pmix"]
    run = make_run(trainee_account, disk_target, engine="ior", workload=workload(8))

    assert command_line(render_script(run), "ior")[:5] == ["srun", "--mpi=pmix", "-n", "8", "ior"]


def test_mdtest_ranks_start_through_the_launcher_too(
    trainee_account, disk_target, settings
) -> None:
    settings.MPI_LAUNCHER = ["mpirun"]
    small_files = workload(8, block_size=16 * KiB, size_per_process=200 * 16 * KiB)
    run = make_run(trainee_account, disk_target, engine="mdtest", workload=small_files)

    words = command_line(render_script(run), "mdtest")

    assert words[:4] == ["mpirun", "-n", "8", "mdtest"]
    assert words[words.index("-d") + 1] == f"{run.run_directory}/mdtest"


def test_one_rank_starts_on_its_own(trainee_account, disk_target) -> None:
    run = make_run(trainee_account, disk_target, engine="ior", workload=workload(1))

    assert command_line(render_script(run), "ior")[0] == "ior"


def test_fio_forks_its_processes_itself(trainee_account, disk_target) -> None:
    run = make_run(trainee_account, disk_target, engine="fio", workload=workload(8))

    assert command_line(render_script(run), "fio")[0] == "fio"
    assert job_spec(run, "#!/bin/bash\n", "token").tasks == 1


def test_a_launcher_word_the_shell_would_read_is_quoted(
    trainee_account, disk_target, settings
) -> None:
    settings.MPI_LAUNCHER = ["mpirun", "--mca", "btl", "^openib"]
    run = make_run(trainee_account, disk_target, engine="ior", workload=workload(8))

    script = render_script(run)

    assert "mpirun --mca btl '^openib' -n 8 ior" in script


def test_a_run_on_a_directory_only_the_node_knows_works_in_it_as_its_cwd(
    trainee_account, disk_target
) -> None:
    disk_target.path_template = "$TMPDIR"
    disk_target.save()
    run = make_run(trainee_account, disk_target, engine="ior", workload=workload(4))

    script = render_script(run)
    spec = job_spec(run, script, "token")

    # The script resolves it, goes there, and names it "." to the benchmark; Slurm,
    # which cannot name a file there, sends the job's output nowhere: the script
    # writes its output file there itself.
    assert 'run_dir="${TMPDIR:-}"/storagelab-run-' in script
    assert "-o ./ior.dat" in " ".join(command_line(script, "ior"))
    assert (spec.working_directory, spec.standard_output) == ("/", "/dev/null")
    assert 'exec >"$output" 2>&1' in script
    assert subprocess.run(["bash", "-n"], input=script, text=True).returncode == 0


def test_a_run_on_a_directory_each_node_has_its_own_of_is_kept_on_one_node(
    trainee_account, disk_target, tmpfs_target
) -> None:
    eight = workload(8)
    on_disk = make_run(trainee_account, disk_target, engine="ior", workload=eight)
    in_memory = make_run(trainee_account, tmpfs_target, engine="ior", workload=eight)
    disk_target.path_template = "$TMPDIR"
    disk_target.save()
    on_tmpdir = make_run(trainee_account, disk_target, engine="ior", workload=eight)

    nodes = [job_spec(run, "#!/bin/bash\n", "t").nodes for run in (on_disk, in_memory, on_tmpdir)]

    # A shared target: wherever Slurm puts the ranks; a node's own: all on one node.
    assert nodes == [None, 1, 1]


def test_ranks_spread_over_nodes_ask_slurm_for_them_unless_the_directory_is_a_nodes_own(
    trainee_account, disk_target, tmpfs_target
) -> None:
    spread = workload(8, nodes=2, mpi_io=True, file_per_process=False)
    on_disk = make_run(trainee_account, disk_target, engine="ior", workload=spread)
    in_memory = make_run(trainee_account, tmpfs_target, engine="ior", workload=spread)

    specs = [job_spec(run, render_script(run), "t") for run in (on_disk, in_memory)]

    # Two nodes where both see the file; all on one where each node has its own.
    assert [spec.nodes for spec in specs] == [2, 1]
    # Evenly: four ranks a node, not the seven and one Slurm packs by default.
    assert [spec.tasks_per_node for spec in specs] == [4, None]
    assert "MPI-IO, on 2 nodes" in specs[0].script
    assert "nodes" not in specs[1].script.splitlines()[2]


def test_slurm_opens_no_file_of_a_run_on_a_path_either(trainee_account, disk_target) -> None:
    """Slurm would open the output file in the target directory before the script has
    checked it, and follow a link another user planted there: it sends the job's output
    nowhere, and the script writes the file once the directory and every one above it
    passed (tests/jobs/test_job_script_live.py plants the link)."""
    run = make_run(trainee_account, disk_target, workload=workload(1))
    script = render_script(run)
    spec = job_spec(run, script, "token")

    assert (spec.working_directory, spec.standard_output) == ("/", "/dev/null")
    checks, _, rest = script.partition('exec >"$output" 2>&1')
    assert "exit 78" in checks and 'while [ "$parent" != / ]' in checks
    assert 'mkdir -- "$run_dir"' in rest  # nothing made before the checks passed
    assert subprocess.run(["bash", "-n"], input=script, text=True).returncode == 0


def test_a_run_asks_its_node_for_an_inode_for_every_file_it_makes(
    make_user, disk_target, settings
) -> None:
    """1,600 files of mdtest, its directory and its output file; and Darshan's logs where
    they go beside them (a shared target): the job finds them free or runs nothing
    (test_job_script_live.py)."""
    settings.RUN_DARSHAN_RUNTIME = ""
    small_files = workload(
        8, block_size=16 * KiB, size_per_process=200 * 16 * KiB, files_per_process=200
    )
    run = make_run(
        make_user("sl-inodes").cluster_account, disk_target, engine="mdtest", workload=small_files
    )

    assert files_needed(run) == 1602
    assert '[ "${free:-0}" -lt 1602 ]' in render_script(run)
    settings.RUN_DARSHAN_RUNTIME = "/usr/lib/libdarshan.so"
    assert files_needed(run) == 1602 + DARSHAN_FILES
