"""A job's Darshan log read into an JobIO (exercises/advisor/job_io.py).

read_job_io() (a job's log) and read_run_logs() (a lab run's, one per process)
are the only places that open a log with PyDarshan; call them through jobio.sandbox,
never in the web server's process: libdarshan-util is C and a crafted
log could make it loop or allocate without end.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from exercises.advisor.job_io import SIZE_BINS, JobIO

# Names Darshan gives to the standard streams: not files the job chose.
STREAMS = {"<STDIN>", "<STDOUT>", "<STDERR>"}


class LogUnreadable(Exception):
    """Not a Darshan log we can read; the message says why, in one line, and what to do."""


def read_job_io(path: Path) -> JobIO:
    """The I/O the log at `path` records, or LogUnreadable. Opens the log with
    libdarshan-util through PyDarshan's backend, checking every call's answer
    (DarshanReport reads a log cut short as one without records). Run it in a
    sandbox (jobio.sandbox.parse)."""
    log = _read_log(path)
    return _job_io([log], nprocs=int(log.job["nprocs"]))


def read_run_logs(paths: list[Path]) -> JobIO:
    """The I/O of one run recorded as several logs, one per process (a
    darshan-runtime built without MPI writes one for each process it is preloaded
    into: fio's parent and each job it forks, every rank of an MPI program). The
    processes are those that read or wrote; a file that several of them read or wrote
    counts as shared, as Darshan's MPI reduction would have recorded it. Run it in a
    sandbox (jobio.sandbox.parse_run_logs)."""
    if len(paths) > RUN_LOGS_MAX:
        raise LogUnreadable(
            f"The run left {len(paths)} Darshan logs, more than the {RUN_LOGS_MAX} its "
            "processes can write, so its I/O was not read."
        )
    working = [log for log in (_read_log(path, posix_needed=False) for path in paths) if log.did_io]
    if not working:
        raise LogUnreadable(
            "Darshan recorded no reads or writes in the run's directory: no process of "
            "the benchmark was watched."
        )
    return _job_io(working, nprocs=len(working))


# A run's processes (8 at most in the exercises), one log each, and the parent that
# started them (fio's, or the MPI launcher).
RUN_LOGS_MAX = 16


@dataclass
class _Log:
    """What one log holds that a JobIO is made of."""

    job: dict
    exe: str
    records: list[dict]
    names: dict[int, str]
    partial: bool

    @property
    def did_io(self) -> bool:
        return any(
            r["counters"]["POSIX_READS"] > 0 or r["counters"]["POSIX_WRITES"] > 0
            for r in self.records
            if self.names.get(r["id"], "") not in STREAMS
        )


def _read_log(path: Path, *, posix_needed: bool = True) -> _Log:
    """One log. Of a run's logs, one without a POSIX record is a process that did no
    file I/O (`posix_needed` False); of a job, a log with nothing to advise on."""
    from darshan.backend import cffi_backend as backend  # noqa: PLC0415 -- heavy; the sandbox's child only

    ffi, lib = backend.ffi, backend.libdutil
    handle = lib.darshan_log_open(str(path).encode())
    if handle == ffi.NULL:
        raise LogUnreadable(
            "This is not a Darshan log, or its header is cut short: upload the .darshan "
            "file that Darshan wrote for the job."
        )
    try:
        log = {"handle": handle, "modules": None, "name_records": None}
        jobrec = ffi.new("struct darshan_job *")
        if lib.darshan_log_get_job(handle, jobrec) < 0:
            raise LogUnreadable(CUT_SHORT)
        job = backend.log_get_job(log)
        if "POSIX" not in backend.log_get_modules(log) and not posix_needed:
            return _Log(job, "", [], {}, partial=False)
        if "POSIX" not in backend.log_get_modules(log):
            raise LogUnreadable(
                f"The log of job {job['jobid']} has no POSIX record: Darshan did not watch "
                "this job's reads and writes (was its POSIX module disabled, or did the job "
                "do no file I/O?), so there is nothing to advise on."
            )
        modules = backend.log_get_modules(log)
        names = _names(ffi, lib, handle)
        records = _posix_records(backend, log)
        partial = any(bool(m.get("partial_flag")) for m in modules.values())
        return _Log(job, str(backend.log_get_exe(log)), records, names, partial)
    finally:
        lib.darshan_log_close(handle)


CUT_SHORT = (
    "This Darshan log is cut short or damaged: upload the whole .darshan file (copy it "
    "again from the log directory; a log still being written is complete once the job ends)."
)


def _names(ffi: Any, lib: Any, handle: Any) -> dict[int, str]:
    records = ffi.new("struct darshan_name_record **")
    count = ffi.new("int *")
    lib.darshan_log_get_name_records(handle, records, count)  # void: it says nothing
    names = {}
    for i in range(count[0]):
        names[records[0][i].id] = ffi.string(records[0][i].name).decode("utf-8", "replace")
        lib.darshan_free(records[0][i].name)
    lib.darshan_free(records[0])
    return names


def _posix_records(backend: Any, log: dict) -> list[dict]:
    """Every POSIX record; a module region cut short is an error, not an end."""
    ffi, lib = backend.ffi, backend.libdutil
    index = backend.log_get_modules(log)["POSIX"]["idx"]
    records = []
    while True:
        buf = ffi.new("void **")  # a fresh one each time: the library fills a given one
        answer = lib.darshan_log_get_record(log["handle"], index, buf)
        if answer == 0:
            return records
        if answer < 0:
            raise LogUnreadable(CUT_SHORT)
        record = ffi.cast(backend._structdefs["POSIX"], buf)
        records.append(backend._make_generic_record(record, "POSIX", dtype="dict"))
        lib.darshan_free(buf[0])


SUMMED = (
    "POSIX_BYTES_WRITTEN",
    "POSIX_BYTES_READ",
    "POSIX_WRITES",
    "POSIX_READS",
    "POSIX_SEQ_READS",
    "POSIX_SEQ_WRITES",
    "POSIX_CONSEC_READS",
    "POSIX_CONSEC_WRITES",
    *(f"POSIX_SIZE_{way}_{b}" for way in ("WRITE", "READ") for b, _, _ in SIZE_BINS),
    "POSIX_FSYNCS",
    "POSIX_FDSYNCS",
    "POSIX_F_META_TIME",
    "POSIX_F_READ_TIME",
    "POSIX_F_WRITE_TIME",
)


def _job_io(logs: list[_Log], nprocs: int) -> JobIO:
    sums: dict[str, float] = {}
    files: set[int] = set()
    shared: set[int] = set()
    writers: dict[int, int] = {}  # file -> the logs that read or wrote it
    footprint: dict[int, int] = {}
    common: dict[int, int] = {}
    first = 0
    for log in logs:
        for record in log.records:
            name = log.names.get(record["id"], "")
            if name in STREAMS:
                continue
            c, fc = record["counters"], record["fcounters"]
            files.add(record["id"])
            if c["POSIX_READS"] > 0 or c["POSIX_WRITES"] > 0:
                first += int(log.job["nprocs"]) if record["rank"] == -1 else 1
                writers[record["id"]] = writers.get(record["id"], 0) + 1
            if record["rank"] == -1:
                shared.add(record["id"])
            for key in SUMMED:
                value = c[key] if key in c else fc[key]
                if value > 0:  # -1: not recorded (e.g. reduced away)
                    sums[key] = sums.get(key, 0) + (float(value) if key in fc else int(value))
            top = int(max(c["POSIX_MAX_BYTE_WRITTEN"], c["POSIX_MAX_BYTE_READ"])) + 1
            footprint[record["id"]] = max(footprint.get(record["id"], 0), top)
            for i in range(1, 5):
                size, count = int(c[f"POSIX_ACCESS{i}_ACCESS"]), int(c[f"POSIX_ACCESS{i}_COUNT"])
                if size > 0 and count > 0:
                    common[size] = common.get(size, 0) + count
    shared |= {file for file, n in writers.items() if n > 1}

    def n(key: str) -> int:
        return int(sums.get(key, 0))

    top4 = sorted(common.items(), key=lambda sc: (-sc[1], sc[0]))[:4]
    first_log = logs[0]
    return JobIO(
        job_id=int(first_log.job["jobid"]),
        uid=int(first_log.job["uid"]),
        nprocs=nprocs,
        run_time_s=max(float(log.job.get("run_time", 0.0)) for log in logs),
        exe=first_log.exe[:500],
        bytes_written=n("POSIX_BYTES_WRITTEN"),
        bytes_read=n("POSIX_BYTES_READ"),
        writes=n("POSIX_WRITES"),
        reads=n("POSIX_READS"),
        write_sizes=tuple(n(f"POSIX_SIZE_WRITE_{b}") for b, _, _ in SIZE_BINS),
        read_sizes=tuple(n(f"POSIX_SIZE_READ_{b}") for b, _, _ in SIZE_BINS),
        sequential_requests=n("POSIX_SEQ_READS") + n("POSIX_SEQ_WRITES"),
        consecutive_requests=n("POSIX_CONSEC_READS") + n("POSIX_CONSEC_WRITES"),
        first_requests=first,
        files=len(files),
        shared_files=len(shared),
        footprint_bytes=sum(footprint.values()),
        meta_time_s=float(sums.get("POSIX_F_META_TIME", 0.0)),
        io_time_s=float(sums.get("POSIX_F_READ_TIME", 0.0) + sums.get("POSIX_F_WRITE_TIME", 0.0)),
        common_sizes=tuple((int(s), int(c)) for s, c in top4),
        partial=any(log.partial for log in logs),
        syncs=n("POSIX_FSYNCS") + n("POSIX_FDSYNCS"),
    )
