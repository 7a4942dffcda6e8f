"""How a job script starts its benchmark: an MPI benchmark's ranks through the site's
launcher (MPI_LAUNCHER), one rank and fio on their own, every word shell-quoted."""

import shlex

import pytest

from jobs.engines.base import KiB, MiB, Pattern, Workload
from jobs.scripts import job_spec, render_script
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
    trainee, disk_target, settings
) -> None:
    settings.MPI_LAUNCHER = ["mpirun"]
    run = make_run(trainee, disk_target, engine="ior", workload=workload(8))

    words = command_line(render_script(run), "ior")

    assert words[:4] == ["mpirun", "-n", "8", "ior"]
    assert job_spec(run, "#!/bin/bash\n", "token").tasks == 8


def test_the_launcher_is_the_sites_setting(trainee, disk_target, settings) -> None:
    settings.MPI_LAUNCHER = ["srun", "--mpi=pmix"]
    run = make_run(trainee, disk_target, engine="ior", workload=workload(8))

    assert command_line(render_script(run), "ior")[:5] == ["srun", "--mpi=pmix", "-n", "8", "ior"]


def test_mdtest_ranks_start_through_the_launcher_too(trainee, disk_target, settings) -> None:
    settings.MPI_LAUNCHER = ["mpirun"]
    small_files = workload(8, block_size=16 * KiB, size_per_process=200 * 16 * KiB)
    run = make_run(trainee, disk_target, engine="mdtest", workload=small_files)

    words = command_line(render_script(run), "mdtest")

    assert words[:4] == ["mpirun", "-n", "8", "mdtest"]
    assert words[words.index("-d") + 1] == f"{run.run_directory}/mdtest"


def test_one_rank_starts_on_its_own(trainee, disk_target) -> None:
    run = make_run(trainee, disk_target, engine="ior", workload=workload(1))

    assert command_line(render_script(run), "ior")[0] == "ior"


def test_fio_forks_its_processes_itself(trainee, disk_target) -> None:
    run = make_run(trainee, disk_target, engine="fio", workload=workload(8))

    assert command_line(render_script(run), "fio")[0] == "fio"
    assert job_spec(run, "#!/bin/bash\n", "token").tasks == 1


def test_a_launcher_word_the_shell_would_read_is_quoted(trainee, disk_target, settings) -> None:
    settings.MPI_LAUNCHER = ["mpirun", "--mca", "btl", "^openib"]
    run = make_run(trainee, disk_target, engine="ior", workload=workload(8))

    script = render_script(run)

    assert "mpirun --mca btl '^openib' -n 8 ior" in script
