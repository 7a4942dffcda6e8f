"""IOR: an MPI program with one rank per process (the job script starts it with the
site's MPI launcher, MPI_LAUNCHER). Figures come from its summary: the JSON one
(`-O summaryFormat=JSON`), or the text one, the "Summary of all tests" table (IOR 3
also printed "Max Write:" lines before it; IOR 4 does not).

Released IOR versions have printed JSON that is not valid (verbose lines inside
it, a bracket missing, the summary after the closing brace), so when the JSON
does not load, the summary's key/value pairs are read without a JSON parser.
IOR reports MiB/s; results are in bytes/s.
"""

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from jobs.engines.base import (
    BenchmarkResult,
    MiB,
    Pattern,
    ResultParseError,
    Target,
    Workload,
    result,
)

OPERATIONS = ("write", "read")
# "ior ERROR: ..." (3.x) or "ERROR: ..." (4.x); IOR aborts after printing it.
# Every pattern here stays on its line ([ \t], never \s, which spans newlines) and
# bounds its runs: a posted output is its job owner's text, and a pattern that can
# backtrack over the rest of it from many places costs the square of its length.
ERROR_LINE = re.compile(r"^(?:ior )?ERROR:?[ \t]+(.+)$", re.MULTILINE)
BANNER = re.compile(r"^IOR-\S{1,64}: MPI Coordinated Test of Parallel I/O", re.MULTILINE)
RESULTS_STARTED = re.compile(r"^(?:Results:|access[ \t]+bw\(MiB/s\))", re.MULTILINE)
SUMMARY_STARTED = "Summary of all tests:"
NO_SUMMARY = "no IOR summary in the output (neither its 'Summary of all tests' table nor JSON)"
# The keys IOR's JSON opens with (fio's own JSON has "fio version").
IOR_JSON_HEADER = re.compile(r'"(?:Version|Began|Command line)"[ \t]*:')
# The innermost objects ({...} with no brace inside); the summaries are among them.
# (One pattern looking for '"operation"' inside the braces backtracks over the whole
# rest of an output that opens a brace and never closes it, at every "operation".)
FLAT_OBJECT = re.compile(r"\{[^{}]*\}")
KEY_VALUE = re.compile(r'"([^"\n]{1,64})"[ \t]*:[ \t]*("[^"\n]{0,256}"|[^,\s}]{1,64})')
# A row of the "Results" table: its phase, then at least two more cells.
PHASE_ROW = re.compile(r"^[ \t]*(write|read)[ \t]+\S{1,64}[ \t]+\S", re.MULTILINE)
# The test's parameters say which phases ran, hence which summaries must follow.
PHASE_FLAG = re.compile(r'"(writeFile|readFile)"[ \t]*:[ \t]*"?([0-9]{1,9})')


@dataclass(frozen=True)
class _Operation:
    mib_per_s: float
    iops: float
    tasks: int


class Ior:
    name = "ior"
    label = "IOR"
    metadata = False

    def command(self, workload: Workload, target: Target) -> list[str]:
        if workload.files_per_process > 1:
            raise ValueError(
                "IOR writes one file per process or one shared file: many small files need fio"
            )
        if workload.read_only or workload.iterations > 1:
            raise ValueError("IOR reads what it wrote first (read_back); iterations are mdtest's")
        if workload.seconds and workload.collective:
            # Each rank decides by its own clock whether to go through its bytes again:
            # one collective call more on one rank than on another would hang them all.
            raise ValueError("collective calls go through their bytes once: no time-based runs")
        if workload.compressible is not None:
            raise ValueError("data that compresses by a set share needs fio")
        if workload.mpi_io and workload.direct:
            raise ValueError("direct I/O is a POSIX option here: MPI-IO runs go through the cache")
        argv = ["ior", "-a", "MPIIO" if workload.mpi_io else "POSIX", "-w"]
        if workload.collective:
            argv.append("-c")  # MPI_File_write_at_all: collective buffering
        if workload.mpi_io and workload.segments > 1 and not workload.file_per_process:
            if workload.pattern == Pattern.RANDOM:
                raise ValueError("interleaved MPI-IO pieces are written in order, not at random")
            if workload.size_per_process != workload.segments * workload.block_size:
                # IOR's file view holds one transfer a segment.
                raise ValueError("interleaved MPI-IO pieces are one transfer (block_size) each")
            # All of a rank's pieces in one call, through a file view that skips the other
            # ranks' pieces, as an application writes its slab of an array: one collective
            # call then gathers every piece at once (not a call, and a wait, per piece).
            argv += ["--mpiio.useStridedDatatype", "--mpiio.useFileView"]
        if workload.read_back:
            argv.append("-r")
        # Plain byte counts: IOR reads a suffix-less number as bytes. Each rank writes
        # its share in `segments` blocks; in a shared file, segment i holds every rank's
        # i-th block in rank order, so with blocks of one transfer the ranks' writes
        # interleave throughout the file.
        piece = workload.size_per_process // workload.segments
        argv += ["-t", str(workload.block_size), "-b", str(piece), "-s", str(workload.segments)]
        if workload.file_per_process:
            argv.append("-F")  # IOR appends the rank to the file name: ior.dat.00000003
        if workload.pattern == Pattern.RANDOM:
            argv.append("-z")
        if workload.fsync:
            argv.append("-e")  # fsync at close, which IOR times as part of the write
        if workload.direct and not target.tmpfs:
            argv.append("--posix.odirect")  # past the page cache, as fio's --direct=1
        argv += ["-o", f"{target.directory.rstrip('/')}/ior.dat", "-O", "summaryFormat=JSON"]
        if workload.seconds:
            # Each phase goes through its bytes, and again from the start of its file(s)
            # until `seconds` have passed: a figure over seconds on a fast target too.
            argv += ["-O", f"minTimeDuration={workload.seconds}"]
        return argv

    def tasks(self, workload: Workload) -> int:
        return workload.processes

    def parse(self, output: str) -> BenchmarkResult:
        if not output.strip():
            raise ResultParseError("IOR output is empty")
        error = ERROR_LINE.search(output)
        if error:
            raise ResultParseError(f"IOR failed: {error.group(1).strip()[:300]}")
        json_summary = _json_start(output) is not None
        operations = _from_json(output) if json_summary else _from_text(output)
        for name, operation in operations.items():
            if not (math.isfinite(operation.mib_per_s) and operation.mib_per_s > 0):
                raise ResultParseError(f"IOR reports no {name} bandwidth ({operation.mib_per_s})")
        write, read = operations.get("write"), operations.get("read")
        return result(
            engine=self.name,
            processes=max(operation.tasks for operation in operations.values()),
            write_bytes_per_s=write.mib_per_s * MiB if write else None,
            read_bytes_per_s=read.mib_per_s * MiB if read else None,
            write_iops=write.iops if write else None,
            read_iops=read.iops if read else None,
        )


def _json_start(output: str) -> int | None:
    if output.startswith("{"):
        return 0
    position = output.find("\n{")
    return None if position < 0 else position + 1


def _from_json(output: str) -> dict[str, _Operation]:
    """The first test's summary entries ("bwMaxMIB", "OPsMax", "numTasks")."""
    try:
        report, _ = json.JSONDecoder().raw_decode(output, _json_start(output) or 0)
        entries = [entry for entry in report["summary"] if isinstance(entry, dict)]
    # Not JSON (ValueError), nested too deep for Python (RecursionError), a number
    # of more digits than Python converts (ValueError), not IOR's shape.
    except (ValueError, RecursionError, KeyError, TypeError):
        entries = [
            {key: value.strip('"') for key, value in KEY_VALUE.findall(match.group())}
            for match in FLAT_OBJECT.finditer(output)
            if '"operation"' in match.group()
        ]
    operations: dict[str, _Operation] = {}
    for entry in entries:
        name = entry.get("operation")
        if name in OPERATIONS and name not in operations:
            operations[name] = _operation(
                name, entry.get("bwMaxMIB"), entry.get("OPsMax"), entry.get("numTasks")
            )
    expected = {flag[: -len("File")] for flag, on in PHASE_FLAG.findall(output) if int(on)}
    if not operations:
        if not IOR_JSON_HEADER.search(output):
            raise ResultParseError(NO_SUMMARY)
        raise ResultParseError("IOR JSON output ends before its summary (truncated?)")
    missing = sorted(expected - operations.keys())
    if missing:
        raise ResultParseError(
            f"IOR JSON summary has no {' or '.join(missing)} figures (truncated?)"
        )
    return operations


def _from_text(output: str) -> dict[str, _Operation]:
    """The first test's rows of the "Summary of all tests" table; every phase the
    "Results" table shows must have its row (else the output was cut short)."""
    table = _summary_table(output)
    ran = _phases_run(output)
    if not table:
        if SUMMARY_STARTED in output or RESULTS_STARTED.search(output):
            raise ResultParseError(
                "IOR output ends before its 'Summary of all tests' table (truncated?)"
            )
        if BANNER.search(output):
            raise ResultParseError("IOR output ends before its results (truncated?)")
        raise ResultParseError(NO_SUMMARY)
    if ran - table.keys():
        raise ResultParseError(
            "IOR output ends before its 'Summary of all tests' table is complete (truncated?)"
        )
    return {
        name: _operation(name, row.get("Max(MiB)"), row.get("Max(OPs)"), row.get("#Tasks"))
        for name, row in table.items()
    }


def _phases_run(output: str) -> set[str]:
    """The phases (write, read) of the "Results" table, which IOR prints as each
    one ends, before the summary."""
    results = output.partition(SUMMARY_STARTED)[0]
    return {row[1] for row in PHASE_ROW.finditer(results)}


def _summary_table(output: str) -> dict[str, dict[str, str]]:
    """The "Summary of all tests" rows by operation, each by column header. Its
    columns differ between versions (3.3 added the stonewall ones)."""
    lines = output.partition(SUMMARY_STARTED)[2].splitlines()
    header = next((line.split() for line in lines if line.startswith("Operation")), None)
    if header is None:
        return {}
    rows: dict[str, dict[str, str]] = {}
    for line in lines:
        cells = line.split()
        # A row cut short (a truncated output) does not count.
        if cells and cells[0] in OPERATIONS and len(cells) == len(header):
            rows.setdefault(cells[0], dict(zip(header, cells, strict=True)))
    return rows


def _operation(name: str, mib_per_s: Any, iops: Any, tasks: Any) -> _Operation:
    try:
        return _Operation(mib_per_s=float(mib_per_s), iops=float(iops), tasks=int(tasks))
    except (TypeError, ValueError, OverflowError):
        raise ResultParseError(
            f"IOR summary of the {name} phase lacks its bandwidth, operations or task count"
        ) from None
