"""Job scripts: rendered from templates/jobs/job_script.sh.

Every value is typed (the workload, a validated path, a UUID) and shell-quoted
here; nothing a user typed reaches the script as text. The per-run secret travels
in the job's environment, so the script itself can be shown to the user; the
script moves it into a private file at once (never onto a command line).
"""

import math
import re
import shlex

from django.conf import settings
from django.template.loader import render_to_string
from django.urls import reverse

from jobs.engines import Target, get_engine
from jobs.models import BenchmarkRun
from jobs.places import shell_word
from jobs.room import need
from jobs.slurm import JobSpec
from portal.units import iec

# The variable a job finds its secret in, for its posts to the portal (runs here, the
# apps' jobs in jobs/app_jobs.py); its script moves it into a private file at once.
CALLBACK_ENV = "STORAGELAB_RESULT_TOKEN"


def result_url(run: BenchmarkRun) -> str:
    path = reverse("jobs:run-result", kwargs={"key": run.key})
    return settings.PORTAL_CALLBACK_URL.rstrip("/") + path


def describe(run: BenchmarkRun) -> str:
    w = run.workload_params
    files = f", {w.files_per_process} files each" if w.files_per_process > 1 else ""
    timed = f", for {w.seconds} s{' each' if w.block_sizes else ''}" if w.seconds else ""
    direct = ", direct I/O" if w.direct and not run.in_memory else ""
    mpi = (", collective MPI-IO" if w.collective else ", MPI-IO") if w.mpi_io else ""
    pieces = f" in {w.segments} interleaved pieces" if w.segments > 1 else ""
    spread = nodes_of(run) or 1
    nodes = f", on {spread} nodes" if spread > 1 else ""
    sizes = "/".join(iec(size) for size in w.block_sizes)
    writes = f"writes of {sizes} in turn" if w.block_sizes else f"writes of {iec(w.block_size)}"
    return (
        f"{w.pattern} {writes}, {w.processes} process(es) x "
        f"{iec(w.size_per_process)}{pieces}{files}{timed}{direct}{mpi}{nodes}, "
        f"fsync {'on' if w.fsync else 'off'}"
    )


def nodes_of(run: BenchmarkRun) -> int | None:
    """The nodes its job asks Slurm for: one for a directory each node has its own of
    (its processes share the run's files), the exercise's nodes when it spreads its
    processes over several, else as many as Slurm likes (None)."""
    if run.node_local:
        return 1
    nodes = run.workload_params.nodes
    return nodes if nodes > 1 else None


def comment_safe(text: str) -> str:
    """Text for a comment line of the script: no newline or other control character
    can end the comment and start a command, whatever reached the database."""
    return "".join(c if c.isprintable() else "?" for c in text)


# At most this many logs are sent (a process each, and the one that started them):
# jobio/darshan.py reads no more (RUN_LOGS_MAX).
DARSHAN_LOGS_MAX = 16
# The logs' post is tried for this long: the figure is home, and they are no more.
DARSHAN_POST_SECONDS = 60
# A run directory Darshan's configuration can name as a plain regular expression.
PLAIN_PATH = re.compile(r"/[A-Za-z0-9/._-]+")


def darshan_context(run: BenchmarkRun) -> dict:
    """What the script needs to record the run with Darshan (RUN_DARSHAN_RUNTIME), or
    nothing: the site has no runtime, the run is on a target in memory (where Darshan
    would slow it: RUN_DARSHAN_IN_MEMORY), or its directory is not a plain path."""
    if not settings.RUN_DARSHAN_RUNTIME or (run.in_memory and not settings.RUN_DARSHAN_IN_MEMORY):
        return {}
    if run.target_variable:
        # Known on the node only: the script checks and escapes it there, as below.
        include = '"$(darshan_include)"'
    elif PLAIN_PATH.fullmatch(run.run_directory):
        # Each character literal in a POSIX extended regular expression: "." and "-"
        # in brackets, the rest as it is. A config line is split at blanks: none here.
        escaped = "".join(f"[{c}]" if c in ".-" else c for c in run.run_directory)
        include = shlex.quote(f"NAME_INCLUDE ^{escaped}/ POSIX")
    else:
        return {}
    return {
        "darshan": True,
        # Every node sees a shared target: the logs of ranks on other nodes land there
        # too (a node's own /tmp would keep them).
        "darshan_on_target": bool(run.target and run.target.shared and not run.target_variable),
        "darshan_runtime": shlex.quote(settings.RUN_DARSHAN_RUNTIME),
        "darshan_include": include,
        # The benchmark's processes only, not its launcher's (mpirun, its daemons, srun).
        "darshan_app": shlex.quote(f"APP_INCLUDE (^|/){run.engine}$"),
        "darshan_logs_max": DARSHAN_LOGS_MAX,
        "darshan_post_seconds": DARSHAN_POST_SECONDS,
        "darshan_max_bytes": settings.RUN_DARSHAN_MAX_BYTES,
        "logs_url": shlex.quote(
            settings.PORTAL_CALLBACK_URL.rstrip("/")
            + reverse("jobio:run-logs", kwargs={"key": run.key})
        ),
    }


# Besides its logs, Darshan's directory on a shared target holds a directory of them,
# their configuration and their bundle.
DARSHAN_FILES = DARSHAN_LOGS_MAX + 3
# The job script's exit status when the target's filesystem has fewer free inodes than
# the run needs (EX_CANTCREAT): jobs/sync.py says "no room".
NO_ROOM = 73


def files_needed(run: BenchmarkRun) -> int:
    """The inodes the run takes on its target at most (jobs/room.py), Darshan's there
    included: the job checks the filesystem has them free before it makes any."""
    darshan = darshan_context(run)
    on_target = DARSHAN_FILES if darshan.get("darshan_on_target") else 0
    return need(run.workload_params).files + on_target


def render_script(run: BenchmarkRun) -> str:
    engine = get_engine(run.engine)
    # A directory only the node knows is the benchmark's working directory, named ".".
    where = "." if run.target_variable else run.run_directory
    target = Target(directory=where, tmpfs=run.in_memory)
    argv = engine.command(run.workload_params, target)
    ranks = engine.tasks(run.workload_params)
    if ranks > 1:
        # The site's launcher (a validated setting), one rank per Slurm task. A single
        # rank starts on its own, as MPI programs may (a singleton).
        argv = [*settings.MPI_LAUNCHER, "-n", str(ranks), *argv]
    return render_to_string(
        "jobs/job_script.sh",
        {
            "run_key": run.key,
            "engine": run.engine,
            "target": comment_safe(run.target.name),
            "description": comment_safe(describe(run)),
            "target_dir": shell_word(run.target_directory),
            "target_variable": run.target_variable,
            "target_variable_value": f'"${{{run.target_variable}:-}}"',
            "run_dir": shell_word(run.run_directory),
            # A target that compresses: the job measures what the run's files took.
            "stored_by": run.target.stored_by,
            # The job's output file, but for the job id: the script knows that one.
            "output_stem": shell_word(run.output_file("").removesuffix(".out")),
            "command": shlex.join(argv),
            "files_needed": files_needed(run),
            "max_bytes": settings.RESULT_MAX_BYTES,
            "retry_seconds": settings.RESULT_RETRY_SECONDS,
            "result_url": shlex.quote(result_url(run)),
            **darshan_context(run),
        },
    )


def job_spec(run: BenchmarkRun, script: str, token: str) -> JobSpec:
    tasks = get_engine(run.engine).tasks(run.workload_params)
    nodes = nodes_of(run)
    # A directory each node has its own of ($TMPDIR, a node's memory or disk) holds a
    # run only if all its processes are on that node: mdtest's ranks share the tree
    # rank 0 makes, IOR's read back what another rank wrote, the lesson is one node's.
    return JobSpec(
        name=run.job_name,
        script=script,
        partition=settings.SLURM_PARTITION,
        # Slurm opens no file of the run's and goes into none of its directories: it
        # would open the output file before anything checked the directory, following
        # a link another user planted there. The script checks the target directory and
        # every one above it, then writes its output file itself (job_script.sh).
        working_directory="/",
        standard_output="/dev/null",
        # The benchmark's time, and the time its result may take to reach a portal
        # that is away (the script's retries): a limit hit while sending loses it.
        time_limit_minutes=run.time_limit_minutes + math.ceil(settings.RESULT_RETRY_SECONDS / 60),
        tasks=tasks,
        nodes=nodes,
        # Spread evenly over them (4 and 4, not 7 and 1), as the exercise's text says.
        tasks_per_node=math.ceil(tasks / nodes) if nodes and nodes > 1 else None,
        # No HOME: tools read their settings from there (curl its .curlrc), and the
        # target directory is no place for them.
        environment={
            "PATH": settings.JOB_PATH,
            "USER": run.cluster_username,
            CALLBACK_ENV: token,
        },
    )
