"""The parts a fault test breaks for real: a private Redis, a private PostgreSQL, a
delaying proxy in front of slurmrestd, the shared slurmctld, and the portal itself
(gunicorn, a Celery worker, beat) as processes of their own.

Private instances wherever possible: other engineers' tests share this machine, so a
test stops only what it started, except slurmctld (one per machine), which it
restarts in a `finally`."""

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import httpx
from django.conf import settings

from tests.cluster import CONTROLLER, on_controller
from tests.cluster24 import bridge_address

ROOT = Path(__file__).resolve().parents[2]
VENV = Path(os.sys.executable).parent
RUN_DIR = Path(os.getenv("STORAGELAB_RUN_DIR", "/run/storagelab"))
PG_BIN = Path("/usr/lib/postgresql/15/bin")
# The portal under fault gives up on slurmrestd after 2 s and holds a submission for
# 6 s (more than the timeout, so that a request still in flight is never taken over):
# outages cost a test seconds, not the production half-minute.
FAULT_TIMEOUTS = {"SLURMRESTD_TIMEOUT": 2, "SUBMIT_LEASE_SECONDS": 6}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(what: str, check, timeout: float, interval: float = 0.2):
    """Polls `check` until it returns something true; fails the test after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if value := check():
                return value
        except Exception:  # noqa: S110 (not up yet: look again)
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:.0f} s")
        time.sleep(interval)


def _stop(proc: subprocess.Popen, sig: int = signal.SIGTERM, timeout: float = 20) -> None:
    """Stops a process started in a session of its own, with its children."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, sig)
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    except ProcessLookupError:
        pass


class PrivateRedis:
    """A redis-server of this test's own, on a port of its own, without persistence:
    stopped and started again, it comes back empty, as a crashed broker does."""

    def __init__(self, workdir: Path):
        self.port = free_port()
        self.workdir = workdir
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        # The dev Redis's password (the portal under test reads REDIS_PASSWORD_FILE
        # from the environment), in a file: never on a command line.
        config = self.workdir / "redis.conf"
        config.write_text(
            f"requirepass {settings.REDIS_PASSWORD}\n" if settings.REDIS_PASSWORD else ""
        )
        args = [config, "--bind", "127.0.0.1", "--port", str(self.port), "--save", ""]
        args += ["--appendonly", "no", "--dir", self.workdir]
        log = (self.workdir / "redis.log").open("a")
        self.proc = subprocess.Popen(
            ["redis-server", *map(str, args)], stdout=log, stderr=log, start_new_session=True
        )
        wait_until("private Redis", self._answers, timeout=10, interval=0.05)

    def _answers(self) -> bool:
        with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
            s.sendall(b"PING\r\n")
            # Up: it answers, if only to say that it wants the password first.
            return s.recv(16).startswith((b"+PONG", b"-NOAUTH"))

    def stop(self) -> None:
        if self.proc:
            _stop(self.proc)


class PrivatePostgres:
    """A PostgreSQL 15 cluster of this test's own (initdb in a temporary directory,
    run as the postgres user), so restarting it restarts nobody else's database."""

    def __init__(self):
        self.port = free_port()
        # Under /tmp itself: the postgres user cannot enter pytest's root-only tmp_path.
        self.dir = Path(tempfile.mkdtemp(prefix="storagelab-faults-pg-"))
        shutil.chown(self.dir, "postgres", "postgres")
        self.data = self.dir / "data"

    def _as_postgres(self, *command: str | Path, timeout: float = 60) -> None:
        subprocess.run(
            ["runuser", "-u", "postgres", "--", *map(str, command)],
            check=True,
            timeout=timeout,
            stdout=subprocess.DEVNULL,
            cwd=self.dir,
        )

    def _pg_ctl(self, action: str, *extra: str) -> None:
        options = f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._as_postgres(
            PG_BIN / "pg_ctl", action, "-D", self.data, "-w", "-t", "30",
            "-l", self.dir / "postgres.log", "-o", options, *extra,
        )  # fmt: skip

    def create(self, db: str, user: str, password: str) -> None:
        self._as_postgres(PG_BIN / "initdb", "-D", self.data, "-A", "trust", "--no-sync")
        self._pg_ctl("start")
        role = f"CREATE ROLE {user} LOGIN SUPERUSER PASSWORD '{password}'"
        psql = [PG_BIN / "psql", "-h", self.dir, "-p", str(self.port), "-q"]
        self._as_postgres(*psql, "-c", role, "-c", f"CREATE DATABASE {db} OWNER {user}")

    def restart(self) -> None:
        """A fast restart: every connection is cut, the server is away for a moment."""
        self._pg_ctl("restart", "-m", "fast")

    def destroy(self) -> None:
        if (self.data / "postmaster.pid").exists():
            with suppress(subprocess.SubprocessError):
                self._pg_ctl("stop", "-m", "immediate")
        shutil.rmtree(self.dir, ignore_errors=True)


class DelayingProxy:
    """A TCP proxy in front of slurmrestd that holds its answers back `delay` seconds:
    requests reach slurmrestd at once (a job is submitted), the answer comes late.
    With `only` set, only the answers to requests whose bytes contain one of its
    strings are held. `requested` is set when such a request passes."""

    def __init__(self, upstream: tuple[str, int]):
        self.upstream = upstream
        self.delay = 0.0
        self.only: tuple[bytes, ...] = ()
        self.requested = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return  # closed
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        try:
            server = socket.create_connection(self.upstream, timeout=30)
        except OSError:
            client.close()
            return
        held = threading.Event()  # the answer now on its way is to be held back
        threading.Thread(target=self._requests, args=(client, server, held), daemon=True).start()
        self._pump(server, client, held)

    def _requests(self, client: socket.socket, server: socket.socket, held) -> None:
        def on_chunk(chunk: bytes) -> None:
            if self.delay and (not self.only or any(s in chunk for s in self.only)):
                held.set()
                self.requested.set()

        self._pump(client, server, None, on_chunk)

    def _pump(self, src, dst, held, on_chunk=None) -> None:
        try:
            while chunk := src.recv(65536):
                if on_chunk:
                    on_chunk(chunk)
                if held is not None and held.is_set():
                    time.sleep(self.delay)
                    held.clear()
                dst.sendall(chunk)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self._listener.close()


class Portal:
    """gunicorn, a Celery worker and beat, as `make demo` runs them, each in a session
    of its own so that a test can kill one with its children."""

    def __init__(self, workdir: Path, env: dict[str, str]):
        self.port = free_port()
        self.workdir = workdir
        self.url = f"http://127.0.0.1:{self.port}"
        # The cluster's nodes post the jobs' results to this host's address on their
        # network: the web server listens there too.
        self.for_nodes = f"{bridge_address()}:{self.port}"
        self.env = {
            **os.environ,
            "PORTAL_CALLBACK_URL": f"http://{self.for_nodes}",
            "ALLOWED_HOSTS": f"127.0.0.1,localhost,{bridge_address()}",
            **env,
        }
        self.procs: dict[str, subprocess.Popen] = {}

    def _spawn(self, name: str, *command: str | Path) -> None:
        log = (self.workdir / f"{name}.log").open("a")
        self.procs[name] = subprocess.Popen(
            list(map(str, command)), cwd=ROOT, env=self.env, stdout=log, stderr=log,
            start_new_session=True,
        )  # fmt: skip

    def start(self) -> None:
        self.start_web()
        self.start_worker()
        schedule = self.workdir / "celerybeat-schedule"
        self._spawn("beat", VENV / "celery", "-A", "portal", "beat", "--schedule", schedule)
        self.wait_for_web()

    def start_web(self) -> None:
        binds = ["--bind", f"127.0.0.1:{self.port}", "--bind", self.for_nodes]
        self._spawn("web", VENV / "gunicorn", "portal.wsgi", *binds, "--workers", "2")

    def wait_for_web(self) -> None:
        wait_until("gunicorn", lambda: httpx.get(f"{self.url}/login/", timeout=2), timeout=30)

    def stop_web(self) -> None:
        _stop(self.procs["web"])

    def start_worker(self) -> None:
        # The runs' queue, the results' and the Darshan logs' (each a worker of its own
        # in production).
        queues = "celery,results,darshan"
        worker = ["worker", "--queues", queues, "--concurrency", "2", "--loglevel", "INFO"]
        self._spawn("worker", VENV / "celery", "-A", "portal", *worker)

    def kill_worker(self) -> None:
        """kill -9 of the worker and its pool: no shutdown, no acknowledgement."""
        _stop(self.procs["worker"], signal.SIGKILL)

    def stop(self) -> None:
        for proc in self.procs.values():
            _stop(proc)

    def log(self, name: str) -> str:
        return (self.workdir / f"{name}.log").read_text(errors="replace")


def _alive(pidfile: Path) -> bool:
    try:
        status = Path(f"/proc/{int(pidfile.read_text())}/status").read_text()
    except (OSError, ValueError):
        return False
    return "\nState:\tZ" not in status


@contextmanager
def slurmctld_stopped(timeout: float = 60) -> Iterator[None]:
    """The cluster's slurmctld, stopped (TERM: it saves its state, as on a restart; its
    container ends with it, slurmrestd too) and always started again, as its container
    starts it."""
    on_controller("pkill", "-TERM", "-x", "slurmctld")
    try:
        wait_until("slurmctld stopped", lambda: not controller_runs(), timeout)
        yield
    finally:
        subprocess.run(["docker", "start", CONTROLLER], check=True, capture_output=True, timeout=60)
        wait_until(
            "slurmctld answering",
            lambda: on_controller("scontrol", "ping").returncode == 0,
            timeout,
        )


def controller_runs() -> bool:
    state = subprocess.run(
        ["docker", "inspect", "-f", "{{.State.Running}}", CONTROLLER],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    return state.stdout.strip() == "true"
