"""fio, the default engine: one fio process forks a job per process and reports
them as one JSON document (`--output-format=json`)."""

import json
import os
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from jobs.engines.base import (
    SWEEP_MAX,
    BenchmarkResult,
    Latency,
    Pattern,
    ResultParseError,
    Target,
    Workload,
    result,
)

# The write and the read-back job must name their files alike, so that the reader
# finds the writer's data ($jobnum counts each job's clones from 0).
FILE_NAME_FORMAT = "data.$jobnum.$filenum"
SHARED_FILE = "shared.dat"
PERCENTILE_KEYS = {"p50": "50.000000", "p95": "95.000000", "p99": "99.000000"}


class Fio:
    name = "fio"
    label = "fio"
    metadata = False

    def command(self, workload: Workload, target: Target) -> list[str]:
        if workload.mpi_io or workload.segments > 1 or workload.nodes > 1:
            raise ValueError(
                "fio forks its processes on one node and writes with POSIX calls: "
                "MPI-IO, interleaved segments and several nodes need IOR"
            )
        if workload.iterations > 1:
            raise ValueError("fio repeats by time (seconds): iterations are mdtest's")
        # fio splits --directory (and --filename) at ':' into several paths.
        if ":" in target.directory:
            raise ValueError(f"fio cannot use a directory with ':' in it: {target.directory}")
        random = workload.pattern == Pattern.RANDOM
        argv = [
            "fio",
            "--output-format=json",
            # One entry per phase, with fio's own aggregate bandwidth and exact
            # percentiles over all processes (the parser also reads per-job output).
            "--group_reporting",
            f"--directory={target.directory}",
            "--ioengine=psync",
            # O_DIRECT where the exercise asks for it and the target has a device below
            # its page cache; otherwise the page cache, as applications (and IOR's POSIX
            # backend) use it, with --end_fsync making the device part of the figure.
            f"--direct={int(workload.direct and not target.tmpfs)}",
            # Written files grow as an application's would, nothing is reserved
            # before the clock starts (IOR does not preallocate either).
            "--fallocate=none",
            f"--bs={workload.block_size}",
            f"--numjobs={workload.processes}",
            *_file_layout(workload),
        ]
        if workload.compressible is not None:
            # Fresh buffers for every write, N % of each zeros (0: random bytes). Without
            # this, fio's random bytes, made once: no more compressible.
            argv += [f"--buffer_compress_percentage={workload.compressible}", "--refill_buffers"]
        if random:
            # The same offsets on every run, so that two runs compare; fio's random
            # map (kept on) writes every block exactly once.
            argv.append("--randrepeat=1")
        if workload.seconds:
            # Over the files again and again until the time is up: the figure is the
            # bytes of those seconds, whatever the files' size.
            argv += ["--time_based", f"--runtime={workload.seconds}s"]
        if workload.block_sizes:
            return argv + _sweep(workload, random)
        if workload.read_only:
            # fio lays the files out before the clock starts (a job reading what was
            # there before it), then times the reads alone; --invalidate, fio's default,
            # drops the laid-out pages from the page cache first.
            return argv + ["--name=read", f"--rw={'randread' if random else 'read'}"]
        argv += ["--name=write", f"--rw={'randwrite' if random else 'write'}"]
        if workload.fsync:
            argv.append("--end_fsync=1")
        if workload.read_back:
            # A new group after every writer has finished: separate read figures.
            argv += ["--name=read", "--stonewall", f"--rw={'randread' if random else 'read'}"]
        return argv

    def tasks(self, workload: Workload) -> int:
        return 1

    def parse(self, output: str) -> BenchmarkResult:
        report = _load_json(output)
        jobs = report.get("jobs")
        if not isinstance(jobs, list) or not jobs or not all(isinstance(j, dict) for j in jobs):
            raise ResultParseError("fio JSON output has no jobs")
        for job in jobs:
            error = job.get("error", 0)
            if error:
                name = str(job.get("jobname", "?"))[:80]
                raise ResultParseError(
                    f"fio job {name!r} failed: {_strerror(error)} (error {str(error)[:20]})"
                )
        try:
            series = _series(jobs, report)
            if series:
                # The run's figure is the largest request's (Workload.block_sizes).
                jobs = [j for j in jobs if _request_size(j, report) == series[-1][0]]
            write = _direction(jobs, "write", report)
            read = _direction(jobs, "read", report)
        except ResultParseError:
            raise
        except KeyError as e:
            raise ResultParseError(
                f"fio JSON output lacks an expected field ({str(e)[:100]})"
            ) from None
        except (TypeError, ValueError, OverflowError, AttributeError) as e:
            raise ResultParseError(
                f"fio JSON output has an unreadable value ({str(e)[:100]})"
            ) from None
        if write is None and read is None:
            raise ResultParseError("fio output has neither write nor read figures (no I/O done)")
        return result(
            engine=self.name,
            processes=max(d.processes for d in (write, read) if d is not None),
            write_bytes_per_s=write.bytes_per_s if write else None,
            read_bytes_per_s=read.bytes_per_s if read else None,
            write_iops=write.iops if write else None,
            read_iops=read.iops if read else None,
            write_latency=write.latency if write else None,
            read_latency=read.latency if read else None,
            series=series,
        )


def _sweep(workload: Workload, random: bool) -> list[str]:
    """A job per request size, each after the one before has ended (a group of its
    own: stonewall), each on files of its own: a size never writes over blocks an
    earlier one laid out, which a filesystem takes faster than new ones."""
    argv = []
    for size in workload.block_sizes:
        argv += [
            f"--name=write-{size}",
            "--stonewall",
            f"--bs={size}",
            f"--filename_format=data.{size}.$jobnum.$filenum",
            f"--rw={'randwrite' if random else 'write'}",
        ]
        if workload.fsync:
            argv.append("--end_fsync=1")
    return argv


def _file_layout(workload: Workload) -> list[str]:
    size = workload.size_per_process
    if not workload.file_per_process:
        # One file, each process writing its own contiguous part (as IOR's segments).
        return [
            f"--filename={SHARED_FILE}",
            f"--filesize={size * workload.processes}",
            f"--size={size}",
            f"--offset_increment={size}",
        ]
    layout = [f"--filename_format={FILE_NAME_FORMAT}"]
    files = workload.files_per_process
    if files == 1:
        return [*layout, f"--size={size}"]
    # Whole blocks per file (fio would skip a partial block at each file's end).
    file_size = size // files // workload.block_size * workload.block_size
    return [
        *layout,
        f"--nrfiles={files}",
        f"--filesize={file_size}",
        f"--size={file_size * files}",
        # Create, write and close one file after the other, as a program writing
        # many small files does.
        "--file_service_type=sequential",
        "--openfiles=1",
    ]


def _load_json(output: str) -> dict[str, Any]:
    """The JSON document in fio's output; fio prints warnings and errors
    ("fio: ...") before it on the same stream."""
    if not output.strip():
        raise ResultParseError("fio output is empty")
    start = _json_start(output)
    if start is None:
        complaint = next((ln for ln in output.splitlines() if ln.startswith("fio:")), None)
        if complaint:
            raise ResultParseError(f"fio output has no JSON, fio said: {complaint[:300]}")
        raise ResultParseError("no JSON in fio output (was it run with --output-format=json?)")
    try:
        report, _ = json.JSONDecoder().raw_decode(output, start)
    except json.JSONDecodeError as e:
        if _cut_short(output, e):
            raise ResultParseError(
                "fio output ends before its JSON is complete (truncated?)"
            ) from None
        raise ResultParseError(
            f"fio output is not valid JSON at line {e.lineno} column {e.colno} (garbled?)"
        ) from None
    except RecursionError:
        raise ResultParseError("fio output's JSON is nested deeper than fio's ever is") from None
    except ValueError:  # a number of more digits than Python converts
        raise ResultParseError("fio output's JSON has a number no benchmark prints") from None
    if not isinstance(report, dict):
        raise ResultParseError("fio output is JSON but not fio's report")
    return report


def _json_start(output: str) -> int | None:
    if output.startswith("{"):
        return 0
    position = output.find("\n{")
    return None if position < 0 else position + 1


def _cut_short(output: str, error: json.JSONDecodeError) -> bool:
    """Whether the JSON stops rather than goes wrong: it ends inside a string, or
    the decoder stumbles on the output's last line."""
    return error.msg.startswith("Unterminated string") or "\n" not in output[error.pos :].rstrip()


def _strerror(error: Any) -> str:
    try:
        return os.strerror(int(error))
    except (TypeError, ValueError, OverflowError):
        return "unknown error"


@dataclass(frozen=True)
class _Figures:
    bytes_per_s: float
    iops: float
    processes: int
    latency: Latency | None


def _direction(jobs: list[dict[str, Any]], ddir: str, report: dict[str, Any]) -> _Figures | None:
    """One direction's figures over the jobs that did I/O in it.

    Without group reporting fio lists every process as a job of its own: the
    bandwidths and IOPS are summed. With it, one entry stands for its group's
    `numjobs` processes and already holds their aggregate.
    """
    per_group: dict[object, int] = defaultdict(int)
    for job in jobs:
        per_group[job.get("groupid")] += 1
    active = [job for job in jobs if int(job[ddir]["io_bytes"]) > 0]
    if not active:
        return None
    bytes_per_s = sum(_bandwidth(job[ddir]) for job in active)
    if bytes_per_s <= 0:
        raise ResultParseError(f"fio measured no time for its {ddir}s (too small to time?)")
    processes = sum(
        _numjobs(job, report) if per_group[job.get("groupid")] == 1 else 1 for job in active
    )
    return _Figures(
        bytes_per_s=bytes_per_s,
        iops=sum(float(job[ddir]["iops"]) for job in active),
        processes=processes,
        latency=_latency([job[ddir] for job in active]),
    )


def _request_size(job: dict[str, Any], report: dict[str, Any]) -> int | None:
    """The job's --bs in bytes, as fio reports the options it was given (the engine
    gives it in bytes; anything else is no size of a sweep)."""
    for options in (job.get("job options"), report.get("global options")):
        if isinstance(options, dict) and "bs" in options:
            value = options["bs"]
            return (
                int(value)
                if isinstance(value, str) and value.isdigit() and len(value) < 12
                else None
            )
    return None


def _series(jobs: list[dict[str, Any]], report: dict[str, Any]) -> tuple | None:
    """A sweep's write figures, (request bytes, bytes/s) smallest first; None when the
    jobs wrote with one request size (no sweep)."""
    sizes = sorted({s for j in jobs if (s := _request_size(j, report)) is not None})
    if len(sizes) < 2:
        return None
    if len(sizes) > SWEEP_MAX:  # before the work per size: a crafted output's cost stays bounded
        raise ResultParseError(f"fio output has {len(sizes)} request sizes, more than a run writes")
    series = []
    for size in sizes:
        figures = _direction([j for j in jobs if _request_size(j, report) == size], "write", report)
        if figures is None:
            raise ResultParseError(f"fio wrote nothing with {size}-byte requests")
        series.append((size, figures.bytes_per_s))
    return tuple(series)


def _bandwidth(stats: dict[str, Any]) -> float:
    if "bw_bytes" in stats:
        return float(stats["bw_bytes"])
    return float(stats["bw"]) * 1024  # fio before 3.0 gave KiB/s only


def _numjobs(job: dict[str, Any], report: dict[str, Any]) -> int:
    for options in (job.get("job options"), report.get("global options")):
        if isinstance(options, dict) and "numjobs" in options:
            return int(options["numjobs"])
    return 1


def _latency(stats: list[dict[str, Any]]) -> Latency | None:
    """Completion latency in µs. Over several jobs, each percentile is the
    largest of the jobs' percentiles: an upper bound of the combined one (fio's
    group reporting, which the command uses, merges the histograms exactly)."""
    clats = [s["clat_ns"] for s in stats if isinstance(s.get("clat_ns"), dict)]
    clats = [c for c in clats if c.get("N", 1)]
    if not clats:
        return None
    maxima = [float(c["max"]) for c in clats if "max" in c]
    top = max(maxima) / 1000 if maxima else None

    def percentile(key: str) -> float | None:
        values = [float(c["percentile"][key]) for c in clats if key in c.get("percentile", {})]
        if not values:
            return None
        # fio's percentiles are bounds of histogram buckets and can lie a little
        # above the exact maximum; the true percentile cannot.
        return max(values) / 1000 if top is None else min(max(values) / 1000, top)

    return Latency(**{name: percentile(key) for name, key in PERCENTILE_KEYS.items()}, max=top)
