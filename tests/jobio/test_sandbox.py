"""The child that reads a Darshan log holds nothing of the portal's: run as the sandbox
user, it cannot read the cluster's JWT key or the worker's environment, open a socket
or start a program; what it answers is read up to a bound and checked; and a log whose
figures cannot be (Infinity, NaN) is a damaged log, said so."""

import errno
import json
import os
import pwd
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from exercises.advisor.job_io import JobIO
from jobio import sandbox, warm_client
from jobio.darshan import CUT_SHORT, LogUnreadable
from jobio.sandbox import SandboxUnavailable, answer, parse_bytes, run_confined
from jobio.warm_client import ANSWER_MAX_BYTES
from tests.jobio.logs import log, truncated

LIMITS = {"seconds": 20, "memory_bytes": 768 * 2**20}

# What a crafted log could make the reader try, once confined as the reader is.
PROBE = """
import os, socket, subprocess
confine(**LIMITS)
tried = {"uid": os.getuid(), "groups": os.getgroups()}
attempts = {
    "jwt_key": lambda: open(KEY).read(),
    "worker_environment": lambda: open(f"/proc/{os.getppid()}/environ").read(),
    "tcp_socket": lambda: socket.socket(socket.AF_INET).connect(("127.0.0.1", 5432)),
    "unix_socket": lambda: socket.socket(socket.AF_UNIX),
    "program": lambda: subprocess.run(["/bin/sh", "-c", "id"]),
    "become_root": lambda: os.setuid(0),
    "log_on_stdin": lambda: open("/proc/self/fd/0", "rb").read().decode(),
    # The warm reader it was forked from (its parent): its memory and its socket.
    "reader_memory": lambda: open(f"/proc/{os.getppid()}/mem", "rb").read(1),
    "reader_socket": lambda: os.readlink(f"/proc/{os.getppid()}/fd/0"),
    # Files everyone may read: the accounts, the portal's logs (each user's requests).
    "etc_passwd": lambda: open("/etc/passwd").read(),
    "world_readable": lambda: open(READABLE).read(),
    "list_root": lambda: os.listdir("/"),
    "list_tmp": lambda: os.listdir("/tmp"),
}
for name, attempt in attempts.items():
    try:
        tried[name] = ["done", repr(attempt())[:60]]
    except OSError as e:
        tried[name] = ["refused", e.errno]
print(json.dumps(tried))
"""


def probe(readable: Path, data: bytes = b"a log") -> dict:
    key = os.environ.get("SLURM_JWT_KEY_FILE", "/etc/slurm/jwt_hs256.key")
    known = f"KEY = {key!r}\nREADABLE = {str(readable)!r}\n"
    code, stdout, stderr = run_confined(known + PROBE, data, **LIMITS)
    assert code == 0, stderr.decode()[-2000:]
    return json.loads(stdout)


@pytest.fixture
def world_readable() -> Iterator[Path]:
    """A file any user may read, as /var/log/storagelab/*.log (0644 in a 0755 directory)."""
    folder = Path(tempfile.mkdtemp(prefix="storagelab-readable-"))
    try:
        folder.chmod(0o755)
        path = folder / "requests.log"
        path.write_text("GET /check-my-job/ ada\n")
        path.chmod(0o644)
        yield path
    finally:
        shutil.rmtree(folder)


def test_the_reader_cannot_read_the_jwt_key_nor_open_a_socket(settings, world_readable) -> None:
    assert os.path.exists(settings.SLURM_JWT_KEY_FILE)  # the worker's to read

    tried = probe(world_readable)

    sandbox = pwd.getpwnam(settings.DARSHAN_SANDBOX_USER)
    assert tried["uid"] == sandbox.pw_uid != os.getuid()
    assert tried["groups"] == []
    for name in ("jwt_key", "worker_environment", "tcp_socket", "unix_socket", "program",
                 "reader_memory", "reader_socket"):  # fmt: skip
        assert tried[name][0] == "refused", (name, tried[name])
    assert tried["become_root"][0] == "refused"
    assert tried["log_on_stdin"] == ["done", "'a log'"]  # and nothing else


def test_the_reader_opens_nothing_but_the_log_it_was_handed(world_readable) -> None:
    """Files every user may read, the sandbox user too, are no reader's to open: a
    reader a crafted log took over would send them back in its answer."""
    assert pwd.getpwnam("root")  # /etc/passwd is there, for anyone

    tried = probe(world_readable)

    for name in ("etc_passwd", "world_readable", "list_root", "list_tmp"):
        assert tried[name] == ["refused", errno.EACCES], (name, tried[name])
    assert tried["log_on_stdin"] == ["done", "'a log'"]


def test_a_log_is_still_read_in_the_sandbox() -> None:
    io = parse_bytes(log("random-4k").read_bytes(), max_bytes=2**26, **LIMITS)
    assert io.writes == 16384


def test_without_a_sandbox_user_no_log_is_read(settings) -> None:
    settings.DARSHAN_SANDBOX_USER = "no-such-sandbox-user"
    with pytest.raises(SandboxUnavailable, match="not set up to read Darshan logs safely"):
        parse_bytes(log("random-4k").read_bytes(), max_bytes=2**26, **LIMITS)


def test_root_is_no_sandbox_user(settings) -> None:
    settings.DARSHAN_SANDBOX_USER = "0:0"
    with pytest.raises(SandboxUnavailable, match="must not be root"):
        parse_bytes(b"x", max_bytes=2**26, **LIMITS)


def test_a_reader_that_talks_without_end_is_heard_up_to_a_bound() -> None:
    talk = "confine(**LIMITS)\nimport sys\nsys.stdout.write('x' * (64 * 2**20))\n"
    code, stdout, _ = run_confined(talk, b"", **LIMITS)
    assert code == 0 and len(stdout) == ANSWER_MAX_BYTES


def test_a_reader_that_hangs_is_killed_within_its_time() -> None:
    began = time.monotonic()
    with pytest.raises(LogUnreadable, match="longer than 1 s"):
        run_confined("confine(**LIMITS)\nimport time\ntime.sleep(60)\n", b"", seconds=1,
                     memory_bytes=LIMITS["memory_bytes"])  # fmt: skip
    assert time.monotonic() - began < 10


def io_json(**changes) -> str:
    """A JobIO as the reader answers it, with `changes` (JSON text, as sent)."""
    good = JobIO(
        job_id=1, uid=1000, nprocs=1, run_time_s=1.0, exe="app", bytes_written=4096,
        bytes_read=0, writes=1, reads=0, write_sizes=(0,) * 10, read_sizes=(0,) * 10,
        sequential_requests=0, consecutive_requests=0, first_requests=1, files=1,
        shared_files=0, footprint_bytes=4096, meta_time_s=0.1, io_time_s=0.2,
    ).to_json()  # fmt: skip
    text = json.dumps({"io": good})
    for name, value in changes.items():
        text = text.replace(f'"{name}": {json.dumps(good[name])}', f'"{name}": {value}')
    return text


@pytest.mark.parametrize(
    "change",
    [
        {"meta_time_s": "Infinity"},
        {"io_time_s": "NaN"},
        {"run_time_s": "-1.0"},
        {"writes": "1e400"},
        {"bytes_written": str(2**64)},
        {"files": '"many"'},
    ],
    ids=["infinite-time", "nan-time", "negative-time", "infinite-count", "huge", "text"],
)
def test_figures_no_job_can_have_are_a_damaged_log(change) -> None:
    assert JobIO.from_json(json.loads(io_json())["io"])  # the good one reads

    with pytest.raises(LogUnreadable, match="figures no job can have: it is damaged"):
        answer(0, io_json(**change).encode(), b"", 2**28)


# --- what a reader cannot reach: other processes, new processes, the kernel's corners


def children_of(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(child) for child in text.split()]


def warm_reader() -> tuple[int, int]:
    """This process's warm reader: its storagelab-sandbox's pid and the server's."""
    run_confined("confine(**LIMITS)\n", b"", **LIMITS)  # started if it was not
    helper = warm_client._reader.process.pid
    (server,) = children_of(helper)
    return helper, server


def reading_child(server: int) -> int:
    """The child the warm reader forked for the read under way."""
    deadline = time.monotonic() + 10
    while not children_of(server) and time.monotonic() < deadline:
        time.sleep(0.05)
    (child,) = children_of(server)
    return child


def gone(pid: int) -> bool:
    deadline = time.monotonic() + 5
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return not Path(f"/proc/{pid}").exists()


# A reader that tries to outlive its time: a new session, a child in it, then waits.
ESCAPE = """
import os, time
confine(**LIMITS)
tried = {}
for name, attempt in {"setsid": os.setsid, "fork": os.fork}.items():
    try:
        tried[name] = attempt()
    except OSError as e:
        tried[name] = e.errno
print(json.dumps(tried), flush=True)
time.sleep(60)
"""


def read_in_a_thread(program: str, seconds: float) -> tuple[threading.Thread, list]:
    ended: list = []

    def read() -> None:
        try:
            ended.append(run_confined(program, b"", seconds=seconds,
                                      memory_bytes=LIMITS["memory_bytes"]))  # fmt: skip
        except LogUnreadable as e:
            ended.append(e)

    thread = threading.Thread(target=read)
    thread.start()
    return thread, ended


def test_a_reader_that_tries_to_leave_its_group_is_still_killed_with_its_time() -> None:
    _, server = warm_reader()
    thread, ended = read_in_a_thread(ESCAPE, seconds=2)
    child = reading_child(server)
    thread.join(timeout=15)

    assert "longer than 2 s" in str(ended[0])
    assert gone(child)
    assert children_of(server) == []  # it started none that outlived it


def test_a_reader_may_start_no_process_nor_session() -> None:
    program = ESCAPE.replace("time.sleep(60)", "")
    code, stdout, stderr = run_confined(program, b"", **LIMITS)
    assert code == 0, stderr.decode()[-2000:]
    assert json.loads(stdout) == {"setsid": errno.EACCES, "fork": errno.EACCES}


def test_a_reader_dies_with_the_program_that_started_it(settings) -> None:
    """The worker kills storagelab-sandbox (its own user's process); the kernel then
    kills the warm reader and the child reading a log, which are the sandbox user's
    (PR_SET_PDEATHSIG, set by each)."""
    sandbox_uid = pwd.getpwnam(settings.DARSHAN_SANDBOX_USER).pw_uid
    helper, server = warm_reader()
    thread, ended = read_in_a_thread(ESCAPE, seconds=60)
    child = reading_child(server)
    assert Path(f"/proc/{child}").stat().st_uid == sandbox_uid

    os.kill(helper, signal.SIGKILL)
    thread.join(timeout=15)

    assert gone(server) and gone(child)
    assert "stopped before it answered" in str(ended[0])
    # The next read starts a reader of its own.
    assert parse_bytes(log("random-4k").read_bytes(), max_bytes=2**26, **LIMITS).writes == 16384


@pytest.mark.parametrize(("name", "keep"), [("random-4k", 0.9), ("example", 0.3)])
def test_a_reader_killed_by_a_log_is_replaced_before_the_next(tmp_path, name, keep) -> None:
    """Children forked from one warm reader share its address layout and stack canary:
    after one crashed, the next log is read by a new one. A log read well keeps it."""
    cut = truncated(tmp_path, name, keep).read_bytes()
    # libdarshan-util aborts or faults on these (SIGABRT or SIGSEGV, as the layout falls).
    assert run_confined(sandbox.CHILD, cut, **LIMITS)[0] < 0
    _, before = warm_reader()

    with pytest.raises(LogUnreadable) as refused:
        parse_bytes(cut, max_bytes=2**26, **LIMITS)

    assert str(refused.value) == CUT_SHORT  # no exit status: the portal's words
    assert gone(before)
    _, after = warm_reader()
    assert after != before
    parse_bytes(log("random-4k").read_bytes(), max_bytes=2**26, **LIMITS)
    assert warm_reader()[1] == after


def test_a_reader_killed_for_its_time_is_replaced_too() -> None:
    _, before = warm_reader()
    with pytest.raises(LogUnreadable, match="longer than 1 s"):
        run_confined("confine(**LIMITS)\nwhile True: pass\n", b"", seconds=1,
                     memory_bytes=LIMITS["memory_bytes"])  # fmt: skip
    assert gone(before) and warm_reader()[1] != before


def test_on_a_kernel_without_landlock_no_log_is_read() -> None:
    """confine() refuses rather than read with every file the sandbox user may read
    open to the reader; the administrators read why."""
    program = sandbox.CHILD.replace(
        "    confine(**LIMITS)",
        "    import jobio.confine\n"
        "    jobio.confine.LANDLOCK_CREATE_RULESET = 1000  # no such call: as such a kernel\n"
        "    confine(**LIMITS)",
    )
    code, stdout, stderr = run_confined(program, log("random-4k").read_bytes(), **LIMITS)

    with pytest.raises(SandboxUnavailable, match="the kernel has no Landlock") as refused:
        answer(code, stdout, stderr, LIMITS["memory_bytes"])
    assert "not set up to read Darshan logs safely" in str(refused.value)


# What one read leaves for the next: nothing (each is a fork of the warm reader, which
# runs no request's program itself).
MARK = """
import jobio.darshan as reader
confine(**LIMITS)
print(json.dumps(getattr(reader, "MARKED", None)))
reader.MARKED = "by the read before"
"""


def test_a_read_leaves_nothing_for_the_next() -> None:
    answers = [run_confined(MARK, b"", **LIMITS)[1] for _ in range(2)]
    assert [json.loads(a) for a in answers] == [None, None]


# Calls a crafted log could make the C reader try, once confined, by number (x86_64).
SYSCALLS = """
import ctypes, ctypes.util, os
libc = ctypes.CDLL(None, use_errno=True)
confine(**LIMITS)
def call(number, *args):
    result = libc.syscall(number, *[ctypes.c_long(a) for a in args])
    return ctypes.get_errno() if result == -1 else "done"
parent = os.getppid()
print(json.dumps({
    "ptrace_attach_parent": call(101, 16, parent, 0, 0),
    "process_vm_readv_parent": call(310, parent, 0, 0, 0, 0, 0),
    "kill_parent": call(62, parent, 0),
    "kill_itself": call(62, os.getpid(), 0),
    "unshare_user": call(272, 0x10000000),
    "memfd_create": call(319, 0, 0),
    "io_uring_setup": call(425, 1, 0),
    "bpf": call(321, 0, 0, 0),
    "perf_event_open": call(298, 0, 0, -1, -1, 0),
    "userfaultfd": call(323, 0),
    "keyctl": call(250, 0, 0, 0, 0, 0),
    "mount": call(165, 0, 0, 0, 0, 0),
    "clone3": call(435, 0, 0),
    "getdents64_stdin": call(217, 0, 0, 0),
    "tcsets_ioctl": call(16, 1, 0x5402, 0),
    "isatty": call(16, 1, 0x5401, 0),
}))
"""


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="x86_64's system call numbers")
def test_a_reader_may_make_only_the_calls_a_reader_makes() -> None:
    code, stdout, stderr = run_confined(SYSCALLS, b"", **LIMITS)
    assert code == 0, stderr.decode()[-2000:]
    tried = json.loads(stdout)
    assert tried.pop("kill_itself") == "done"
    assert tried.pop("isatty") == errno.ENOTTY  # allowed: stdout is a pipe, not a tty
    assert tried == dict.fromkeys(tried, errno.EACCES)
