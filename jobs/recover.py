"""Recovering an output whose post never arrived: the job script also writes the
benchmark's output into the job's output file, between two lines of its own, and a
staff member (`manage.py attach_result`, or the admin's action on runs) has it read
from there, where the target is mounted.

The file is the user's: it is opened only if it is a regular file owned by the run's
cluster account, in a directory owned by that account, following no link; it is read
up to a bound, and what is found goes through the same intake as a post (stored once,
read by the same parser, on the results queue)."""

import os
import re
import stat
from collections.abc import Callable

from django.conf import settings

from jobs.models import BenchmarkRun
from jobs.results import store_output
from portal.accounts import uid_of

# The lines around the output (templates/jobs/job_script.sh).
BEGINS = re.compile(
    r"^Storage Lab: the output of [a-z]{1,16} follows \(exit status ([0-9]{1,3})\)$"
)
ENDS = re.compile(r"^Storage Lab: end of the output of [a-z]{1,16}$")
# Scripts of older releases wrote the output after this line, and then only what
# went wrong while sending it (their own "Storage Lab: ..." lines and curl's).
OLD_BEGINS = re.compile(r"^Storage Lab: running [a-z]{1,16} in ")
OLD_TRAILER = re.compile(r"^(?:Storage Lab: |curl: \()")


class RecoveryRefused(Exception):
    """Why no output was attached, in one sentence for the staff member."""


def output_file(run: BenchmarkRun) -> str:
    """Where Slurm wrote the job's output (jobs/scripts.py: job_spec)."""
    return run.output_file(run.slurm_job_id)


def attach(run: BenchmarkRun, read: Callable[[BenchmarkRun], str] | None = None) -> str:
    """Reads the run's output from its job's output file (with `read`, by default
    read_own_file) and stores it as if the job had posted it. Returns what was done;
    RecoveryRefused says why not."""
    if run.raw_output_dropped_at is not None:
        # It came and was read; retention dropped the text, not the figures.
        raise RecoveryRefused(
            f"Run {run.key} had its output, read when it came and dropped on "
            f"{run.raw_output_dropped_at:%Y-%m-%d} (RAW_OUTPUT_RETENTION_DAYS, "
            "RAW_OUTPUT_USER_MAX_MB): it is not attached again."
        )
    if run.result_received_at is not None:
        raise RecoveryRefused(f"Run {run.key} has its output already: nothing to attach.")
    if run.slurm_job_id is None:
        raise RecoveryRefused(f"Run {run.key} never reached Slurm: it has no output file.")
    output, exit_code = benchmark_output((read or read_own_file)(run))
    if not store_output(run, output.encode(), exit_code):
        raise RecoveryRefused(f"Run {run.key} received its output meanwhile: nothing attached.")
    return (
        f"Attached {len(output):,} characters of {run.engine} output to run {run.key} from "
        f"{output_file(run)}; it is read on the results queue."
    )


def read_own_file(run: BenchmarkRun) -> str:
    """The job's output file, if it is the run's account's own (see the module's
    docstring), up to a bound: its output, its lines and Slurm's."""
    path = output_file(run)
    if run.target_variable:
        raise RecoveryRefused(
            f"{path} was on the node that ran the job (${run.target_variable} is a directory "
            "each job gets there): it cannot be read from here."
        )
    uid = uid_of(run.cluster_username)
    if uid is None:
        raise RecoveryRefused(f"{run.cluster_username} is not an account of this host.")
    limit = 2 * settings.RESULT_MAX_BYTES + 64 * 1024
    folder = file = -1
    try:
        folder = os.open(run.target_directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        _owned_by(os.fstat(folder), uid, run.target_directory, stat.S_ISDIR)
        file = os.open(
            os.path.basename(path),
            os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY,
            dir_fd=folder,
        )
        _owned_by(os.fstat(file), uid, path, stat.S_ISREG)
        data = os.read(file, limit + 1)
    except FileNotFoundError:
        raise RecoveryRefused(
            f"There is no {path} on this host: run the command where the target is mounted."
        ) from None
    except OSError as e:
        raise RecoveryRefused(f"{path} cannot be read here: {e.strerror or e}.") from None
    finally:
        for fd in (file, folder):
            if fd >= 0:
                os.close(fd)
    if len(data) > limit:
        raise RecoveryRefused(f"{path} is larger than {limit:,} bytes: not a run's output file.")
    return data.decode("utf-8", errors="replace")


def _owned_by(info: os.stat_result, uid: int, path: str, kind: Callable[[int], bool]) -> None:
    if not kind(info.st_mode) or info.st_uid != uid:
        what = "directory" if kind is stat.S_ISDIR else "regular file"
        raise RecoveryRefused(f"{path} is not a {what} of the run's account: it is not read.")


def benchmark_output(text: str) -> tuple[str, int | None]:
    """The benchmark's output in a job's output file, and its exit status (None if
    the script did not say)."""
    lines = text.splitlines()
    # Ours are the first opening line and the last closing one: the output between
    # them is the benchmark's, whatever it printed.
    first = next((i for i, line in enumerate(lines) if BEGINS.match(line)), None)
    if first is not None:
        ends = [i for i in range(first + 1, len(lines)) if ENDS.match(lines[i])]
        if not ends:
            raise RecoveryRefused("The output file ends inside the output: the job was cut short.")
        status = int(BEGINS.match(lines[first]).group(1))
        return "\n".join(lines[first + 1 : ends[-1]]) + "\n", status if status <= 255 else None
    old = [i for i, line in enumerate(lines) if OLD_BEGINS.match(line)]
    if not old:
        raise RecoveryRefused("The output file holds no benchmark output of Storage Lab's.")
    body = lines[old[0] + 1 :]
    while body and OLD_TRAILER.match(body[-1]):
        body.pop()
    return "\n".join(body) + "\n", None
