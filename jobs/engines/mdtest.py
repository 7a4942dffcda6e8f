"""mdtest: the metadata benchmark that comes with IOR, an MPI program with one rank
per process. Each rank creates its files in a directory of its own (`-u`), writes
and fsyncs them, stats them, reads them back and removes them; the figures are the
operations per second of all ranks together, from its "SUMMARY rate" table (the
Max column, as IOR's figures; a phase that did not run reads 0 there).

mdtest prints no JSON. Its table has kept its shape since 1.9 ("File creation :"
rows with a colon there, without since 3.x); the rank count is in its "was launched
with N total task(s)" line.
"""

import math
import re

from jobs.engines.base import (
    BenchmarkResult,
    Pattern,
    ResultParseError,
    Target,
    Workload,
    result,
)

# The rows of its table and the figures they become.
ROWS = {
    "File creation": "create",
    "File stat": "stat",
    "File read": "read",
    "File removal": "remove",
}
# A row: its name, then Max, Min, Mean and Std Dev (a row cut short does not match).
# Every pattern here stays on its line ([ \t], never \s, which spans newlines) and
# bounds its runs: a posted output is its job owner's text, and a pattern that can
# backtrack over the rest of it from every line costs the square of its length.
# (The colon's blanks and the value's are one run when there is no colon: "(?:[ \t]*:)?"
# and not "[ \t]*:?", or a long run of blanks is split in every way.)
ROW = re.compile(
    rf"^[ \t]*({'|'.join(ROWS)})(?:[ \t]*:)?[ \t]+(\S{{1,64}})[ \t]+\S{{1,64}}[ \t]+\S{{1,64}}"
    r"[ \t]+\S{1,64}[ \t]*$",
    re.MULTILINE,
)
# "SUMMARY rate (in ops/sec):" (4.x), "SUMMARY rate:" (3.x), "SUMMARY:" (1.9); with -P a
# "SUMMARY time" table follows the rate one.
SUMMARY = re.compile(r"^SUMMARY(?: rate)?(?: \(in ops/sec\))?:", re.MULTILINE)
TABLE_END = re.compile(r"^(?:SUMMARY|-- finished at )", re.MULTILINE)
LAUNCHED = re.compile(
    r"^mdtest-\S{1,64} was launched with ([0-9]{1,9}) total task\(s\)", re.MULTILINE
)
TASKS_LINE = re.compile(r"^([0-9]{1,9}) tasks, ", re.MULTILINE)
FINISHED = re.compile(r"^-- finished at .* --", re.MULTILINE)
# mdtest's own errors, and Open MPI's word when a rank aborted.
ERROR_LINE = re.compile(r"^(?:mdtest )?ERROR:?[ \t]+(.+)$", re.MULTILINE)
ABORTED = re.compile(r"^MPI_ABORT was invoked on rank ([0-9]{1,9})", re.MULTILINE)


class Mdtest:
    name = "mdtest"
    label = "mdtest"
    metadata = True

    def command(self, workload: Workload, target: Target) -> list[str]:
        if workload.pattern == Pattern.RANDOM:
            raise ValueError("mdtest works through its files in order: random I/O needs fio or IOR")
        if not workload.file_per_process:
            raise ValueError("mdtest here gives every process files of its own")
        if workload.direct or workload.compressible is not None or workload.read_only:
            raise ValueError(
                "mdtest counts file operations: no direct I/O, compressible or read-only runs"
            )
        if workload.mpi_io or workload.segments > 1:
            raise ValueError("mdtest makes files with POSIX calls: MPI-IO and segments need IOR")
        # mdtest splits -d at '@' into several directories.
        if "@" in target.directory:
            raise ValueError(f"mdtest cannot use a directory with '@' in it: {target.directory}")
        file_size = workload.size_per_process // workload.files_per_process
        argv = [
            "mdtest",
            "-F",  # files only: create, stat, read, remove (no directory phases)
            "-u",  # a directory per rank, as programs writing their own files do
            "-n",
            str(workload.files_per_process),
            # Each file written at its creation and read back whole, in one call each.
            "-w",
            str(file_size),
            "-e",
            str(file_size),
        ]
        if workload.fsync:
            argv.append("-y")  # fsync every file after writing it, inside the create phase
        if workload.iterations > 1:
            argv += ["-i", str(workload.iterations)]  # made, read and removed this often
        if workload.seconds:
            # Making files stops after `seconds` (its stonewall), every rank then making
            # as many as the one that made most; the phases after it work on those.
            argv += ["-W", str(workload.seconds)]
        argv += ["-d", f"{target.directory.rstrip('/')}/mdtest"]
        return argv

    def tasks(self, workload: Workload) -> int:
        return workload.processes

    def parse(self, output: str) -> BenchmarkResult:
        if not output.strip():
            raise ResultParseError("mdtest output is empty")
        error = ERROR_LINE.search(output)
        if error:
            raise ResultParseError(f"mdtest failed: {error.group(1).strip()[:300]}")
        aborted = ABORTED.search(output)
        if aborted:
            raise ResultParseError(f"mdtest failed: MPI_ABORT on rank {aborted.group(1)}")
        summary = SUMMARY.search(output)
        if summary is None:
            if LAUNCHED.search(output):
                raise ResultParseError("mdtest output ends before its SUMMARY table (truncated?)")
            raise ResultParseError("no mdtest SUMMARY rate table in the output")
        rest = output[summary.end() :]
        if not FINISHED.search(rest):
            raise ResultParseError(
                "mdtest output ends before its '-- finished at' line (truncated?)"
            )
        # The first table only (mdtest -f/-l/-s prints one per task count).
        end = TABLE_END.search(rest)
        table = rest[: end.start()] if end else rest
        figures: dict[str, float | None] = {}
        for row in ROW.finditer(table):
            figures.setdefault(ROWS[row.group(1)], _rate(row.group(1), row.group(2)))
        if not any(figures.values()):
            raise ResultParseError(
                "mdtest reports no file operations (it was run without file phases?)"
            )
        return result(
            engine=self.name,
            processes=_processes(output[: summary.start()]),
            **{f"{operation}_ops_s": figures.get(operation) for operation in ROWS.values()},
        )


def _rate(row: str, text: str) -> float | None:
    """A row's Max: operations/s, None for a phase that did not run (0)."""
    try:
        value = float(text)
    except ValueError:
        raise ResultParseError(f"mdtest's {row!r} row has no number ({text[:40]!r})") from None
    if not math.isfinite(value) or value < 0:
        raise ResultParseError(f"mdtest's {row!r} row has an impossible rate ({text[:40]})")
    return value or None


def _processes(head: str) -> int:
    """The ranks of the table's test: its "N tasks, M files" line, else the launch line."""
    counts = TASKS_LINE.findall(head) or LAUNCHED.findall(head)
    if not counts:
        raise ResultParseError("mdtest output does not say how many tasks ran")
    return int(counts[-1])
