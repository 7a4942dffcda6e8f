"""One road to Slurm (jobs/admission.py, jobs/app_jobs.py): no module of the portal's
outside jobs/ calls the Slurm client's `submit`, and in jobs/ only the handover of runs
(from their Celery task), the apps' jobs' task and the staff's `slurm_status
--try-job` do. Read from the source, as tests/test_imports.py reads the imports, so
a call no test runs counts too; `submit` by any other way of naming it as well."""

import ast
from pathlib import Path

from tests.test_imports import ROOT, modules

# The modules that hand jobs to Slurm, and why each may.
SUBMITTERS = {
    "jobs.handover": "a queued run, from its Celery task, after its place in the rate limit",
    "jobs.app_jobs": "an app's job (a scan, a purge), from its Celery task, likewise",
    "jobs.management.commands.slurm_status": "staff's `--try-job`: a job that runs `true`",
}


def submits(path: Path) -> list[int]:
    """The lines of `path` that name an attribute `submit` (a call, or the method taken
    to call later) or ask for it by name (getattr(client, "submit"))."""
    return sorted(
        node.lineno
        for node in ast.walk(ast.parse(path.read_text(), str(path)))
        if _names_submit(node)
    )


def _names_submit(node: ast.AST) -> bool:
    if isinstance(node, ast.Attribute):
        return node.attr == "submit"
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in {"getattr", "attrgetter"}
        and any(isinstance(a, ast.Constant) and a.value == "submit" for a in node.args)
    )


def test_no_module_outside_the_jobs_handover_submits_to_slurm() -> None:
    calls = {
        f"{path.relative_to(ROOT)}:{line}"
        for name, path in modules().items()
        if name not in SUBMITTERS and not name.startswith("jobs.slurm")
        for line in submits(path)
    }

    assert sorted(calls) == [], (
        "Only jobs/handover.py (runs) and jobs/app_jobs.py (the apps' jobs) hand jobs to "
        "Slurm: start runs through jobs/admission.py, or register a kind of job with "
        "jobs/app_jobs.py (a Celery task, the rate limit). A `submit` that is not the "
        "Slurm client's needs another name."
    )


def test_the_check_finds_the_submissions_there_are() -> None:
    """Not vacuous: each module allowed to submit does, and the client defines it."""
    known = modules()

    for name in SUBMITTERS:
        assert submits(known[name]), f"{name} no longer submits: take it out of SUBMITTERS"
    assert "def submit(" in known["jobs.slurm.client"].read_text()


def test_a_submit_hidden_behind_another_name_is_found(tmp_path: Path) -> None:
    module = tmp_path / "sneaky.py"
    module.write_text(
        "from jobs.slurm import get_client\n"
        "send = get_client().submit\n"
        "also = getattr(get_client(), 'submit')\n"
    )

    assert submits(module) == [2, 3]
