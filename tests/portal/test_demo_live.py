"""The front door: the README's `make demo`, started as a user starts it (in a
terminal, as root, from the repo root, with a plain shell's environment), serves
the portal until Ctrl-C, and Ctrl-C stops what that run started and nothing else.

It serves the demo site (database `storagelab`, Redis db 0), not the tests' own:
the one a newcomer sees. The dev services must be up (`make test` starts them
first); the test stops the demo's Celery beat so that this `make demo` starts it
(and with it the quota collection at start-up), and starts it again at the end.
A demo already serving on this machine (a developer's own) is never touched.
"""

import codecs
import contextlib
import fcntl
import os
import pwd
import re
import signal
import socket
import subprocess
import termios
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from tests.http import log_in

ROOT = Path(__file__).resolve().parents[2]
RUN_DIR = Path(os.getenv("STORAGELAB_RUN_DIR", "/run/storagelab"))
LOG_DIR = Path(os.getenv("STORAGELAB_LOG_DIR", "/var/log/storagelab"))
ADDRESS = ("127.0.0.1", 8000)
URL = "http://127.0.0.1:8000"
UP = re.compile(r"Storage Lab is up: (http://\S+)")
# What the dev scripts say when they start or stop a service: "started web (pid 42)".
# A service restarted on other code or settings says "restarted": it was found running.
STARTED = re.compile(r"\] started .*?\(pid (\d+)\)")
STOPPED = re.compile(r"\] stopped .*?\(pid (\d+)\)")
CLEAN_UP = "stopping what this run started"
COLLECTED = re.compile(r"Collected (\d{4}-\d\d-\d\d \d\d:\d\d) UTC")
# What the quotas worker logs when a collection round is done (exercises/quotas/tasks.py).
QUOTA_LOG = LOG_DIR / "celery-quotas.log"
QUOTA_ROUND = re.compile(r"quotas: \d+ collected")
# What the first start says of the site's calibration (docker/dev/demo.sh).
CALIBRATION = re.compile(
    r"Calibration round (\d+) of .* started: (\d+) runs|"
    r"(?:has measured references of every exercise on every target|is going) already; "
    r"nothing started"
)
# Services the dev stack runs, that this test expects to find running and to leave so.
# The dev cluster runs in Docker's containers (docker/cluster/): dockerd's pid stands for it.
STACK = {
    "dockerd", "celery-worker", "celery-quotas", "celery-results", "celery-darshan",
}  # fmt: skip


def user_environment() -> dict[str, str]:
    """What a root login shell has: none of the settings pytest and `make test` put
    in this process's environment (REDIS_URL, DJANGO_SETTINGS_MODULE, MAKEFLAGS...),
    but the one that keeps the weather's canaries off."""
    venv = str(ROOT / ".venv")
    path = [p for p in os.environ.get("PATH", "/usr/bin:/bin").split(":") if venv not in p]
    return {
        "PATH": ":".join(path) or "/usr/bin:/bin",
        "HOME": os.environ.get("HOME", "/root"),
        "USER": "root",
        "LOGNAME": "root",
        "SHELL": "/bin/bash",
        "LANG": "C.UTF-8",
        "TERM": "xterm",
        # But one: the demo's Celery beat outlives the test (it was found running), and
        # its canaries would start with no web server to take their figures, each
        # holding a core while it retries (RESULT_RETRY_SECONDS): an 8-process run of
        # the suite's would wait for it.
        "WEATHER_MINUTES": "0",
    }


class Terminal:
    """A command in a pseudo-terminal of its own, which is its controlling terminal
    (a new session): what a user's shell gives `make demo`. Ctrl-C is a byte typed,
    which the terminal driver turns into SIGINT for the foreground process group."""

    def __init__(self, *argv: str):
        master, slave = os.openpty()
        self.proc = subprocess.Popen(
            argv,
            cwd=ROOT,
            env=user_environment(),
            stdin=slave,
            stdout=slave,
            stderr=slave,
            start_new_session=True,
            preexec_fn=_take_terminal,
        )
        os.close(slave)
        self.master = master
        self.output = ""
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        while True:
            try:
                chunk = os.read(self.master, 4096)
            except OSError:  # EIO: every process on the terminal has closed it
                return
            if not chunk:
                return
            self.output += decoder.decode(chunk)

    def wait_for(self, pattern: re.Pattern, timeout: float) -> re.Match:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if match := pattern.search(self.output):
                return match
            if self.proc.poll() is not None and not self._reader.is_alive():
                break
            time.sleep(0.2)
        raise AssertionError(f"no {pattern.pattern!r} within {timeout:.0f} s in:\n{self.output}")

    def ctrl_c(self) -> None:
        os.write(self.master, b"\x03")

    def wait(self, timeout: float) -> int:
        code = self.proc.wait(timeout=timeout)
        self._reader.join(timeout=5)
        return code

    def close(self) -> None:
        """Whatever happened: Ctrl-C, then TERM to its process group (make, the script
        and what runs in the foreground: the script's traps still clean up), then KILL."""
        for stop in (self.ctrl_c, lambda: self._signal(signal.SIGTERM)):
            if self.proc.poll() is None:
                stop()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.proc.wait(timeout=60)
        if self.proc.poll() is None:
            self._signal(signal.SIGKILL)
            self.proc.wait(timeout=10)
        self._reader.join(timeout=5)
        os.close(self.master)

    def _signal(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, sig)


def _take_terminal() -> None:
    """In the child, after setsid(): the pty on fd 0 becomes its controlling terminal,
    and Ctrl-C does what it does in a user's shell. A test run started in the
    background (`make test &` from a script) ignores SIGINT and SIGQUIT, and a child
    inherits that: its shell could then not trap Ctrl-C at all."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)


def alive(pid: int) -> bool:
    status = Path(f"/proc/{pid}/status")
    try:
        return "State:\tZ" not in status.read_text()
    except OSError:
        return False


def running_services() -> dict[str, int]:
    """The dev services running now, by the pids the scripts recorded."""
    found = {}
    for pidfile in RUN_DIR.glob("*.pid"):
        try:
            text = pidfile.read_text().strip()
        except OSError:  # removed meanwhile
            continue
        if text.isdigit() and alive(int(text)):
            found[pidfile.stem] = int(text)
    return found


def cluster_containers() -> set[str]:
    """The dev cluster's running containers, by id (a restart would make new ones)."""
    listed = subprocess.run(
        ["docker", "ps", "-q", "--no-trunc", "--filter", "label=storagelab.cluster=1"],
        capture_output=True, text=True, check=True, timeout=30,
    )  # fmt: skip
    return set(listed.stdout.split())


def port_open() -> bool:
    try:
        with socket.create_connection(ADDRESS, timeout=1):
            return True
    except OSError:
        return False


def dev_script(*argv: str) -> None:
    subprocess.run(
        ["bash", *argv], cwd=ROOT, env=user_environment(), check=True, stdout=subprocess.DEVNULL
    )


def log_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def log_since(path: Path, offset: int) -> str:
    try:
        with path.open("rb") as log:
            log.seek(offset)
            return log.read().decode(errors="replace")
    except FileNotFoundError:
        return ""


# The one capability a portal service keeps (CapEff), by service: none for the others.
EXPECTED_CAPABILITIES = {"celery-quotas": 1 << 2}  # CAP_DAC_READ_SEARCH


def identity(pid: int) -> tuple[int, int]:
    """The process's real UID (all four are the same) and its effective capabilities."""
    status = dict(
        line.split(":\t", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
    )
    uids = set(status["Uid"].split())
    assert len(uids) == 1, status["Uid"]
    return int(uids.pop()), int(status["CapEff"], 16)


def test_make_demo_refuses_an_address_others_reach() -> None:
    """The demo's logins share a password it prints: served on another address than
    the loopback, anyone who reached it would log in as staff. It refuses, and touches
    nothing."""
    services = running_services()
    for address in ("0.0.0.0:8000", "192.0.2.7:8000", "[::]:8000"):
        demo = Terminal("make", "demo", f"WEB_ADDR={address}")
        try:
            assert demo.wait(timeout=60) != 0, demo.output
        finally:
            demo.close()
        assert "loopback only" in demo.output and "Deploying at a site" in demo.output
        assert CLEAN_UP not in demo.output and "started" not in demo.output
    assert running_services() == services


def assert_a_second_demo_is_refused() -> None:
    """A second `make demo` says the portal already serves, fails, and touches nothing."""
    services = running_services()
    second = Terminal("make", "demo")
    try:
        assert second.wait(timeout=60) != 0, second.output
    finally:
        second.close()
    assert "Storage Lab already serves http://127.0.0.1:8000" in second.output, second.output
    assert "make stop" in second.output
    assert CLEAN_UP not in second.output
    assert running_services() == services, second.output


def collected_usage(portal: httpx.Client, since: datetime, worker_log: int) -> str:
    """My storage once a quota round ran after `since`: the worker logged one, and the
    page shows usage collected then (the page says minutes: the log says it was now)."""
    deadline = time.monotonic() + 30
    while True:
        page = portal.get("/storage/", follow_redirects=False)
        assert page.status_code == 200
        times = [datetime.strptime(t, "%Y-%m-%d %H:%M") for t in COLLECTED.findall(page.text)]
        logged = QUOTA_ROUND.search(log_since(QUOTA_LOG, worker_log))
        if logged and times and min(t.replace(tzinfo=UTC) for t in times) >= since:
            return page.text
        assert time.monotonic() < deadline, (
            f"no quota collected since the demo started (worker log: {bool(logged)}):\n" + page.text
        )
        time.sleep(0.5)


def clean_up_after_a_demo() -> None:
    """What a demo that failed a test may leave: its first calibration would go on
    without the web server its jobs post to, beside the other tests (this run's round
    ends with it); and no web server of this run is left behind."""
    dev_script(
        "-c",
        '. docker/dev/env.sh && exec "$VENV/bin/python" manage.py calibrate --cancel '
        "--user instructor",
    )
    if "web" in running_services():
        dev_script("docker/dev/stop.sh", "web")


def test_make_demo_serves_until_ctrl_c_and_stops_only_what_it_started() -> None:
    found = running_services()
    if "web" in found or "demo" in found:
        # A developer's own demo: leave it alone, but it must refuse a second one.
        if "web" in found:
            assert_a_second_demo_is_refused()
        pytest.skip("a `make demo` already runs on this machine: 'make stop' first to test it all")
    if port_open():
        pytest.fail(f"another program listens on {URL}, which `make demo` serves on: stop it")
    if missing := STACK - found.keys():
        pytest.fail(f"{', '.join(sorted(missing))} not running: run docker/dev/up.sh first")

    # A service this run must start (and stop again): the demo's Celery beat, whose
    # start also collects the quotas. It runs again when the test ends.
    dev_script("docker/dev/stop.sh", "celery-beat")
    before = running_services()
    cluster_before = cluster_containers()
    assert cluster_before, "the dev cluster does not run: run docker/dev/up.sh first"
    worker_log = log_size(QUOTA_LOG)
    started_at = datetime.now(UTC).replace(second=0, microsecond=0)
    began = time.monotonic()
    started: set[int] = set()
    demo = Terminal("make", "demo")
    try:
        assert demo.wait_for(UP, timeout=180)[1] == URL
        up_after = time.monotonic() - began
        started = {int(pid) for pid in STARTED.findall(demo.output)}
        now = running_services()
        assert now["web"] in started and now["celery-beat"] in started, demo.output
        web = now["web"]
        # The web server and every worker run as the portal's user, with no capability
        # but the two that need one: the quota walk looks into every account's directory,
        # and the darshan worker may run storagelab-sandbox (it holds none itself).
        portal = pwd.getpwnam("storagelab").pw_uid
        for name, pid in now.items():
            if name == "web" or name.startswith("celery-"):
                assert identity(pid) == (portal, EXPECTED_CAPABILITIES.get(name, 0)), name

        with httpx.Client(base_url=URL, follow_redirects=True, timeout=30) as portal:
            log_in(portal, "trainee1", "storagelab")
            lab = portal.get("/lab/")
            assert lab.status_code == 200 and not lab.history, "the lab sent trainee1 away"
            assert "trainee1" in lab.text and "1a" in lab.text
            assert "Storage course (demo)" in portal.get("/courses/").text
            health = portal.get("/healthz")
            assert (health.status_code, health.text.strip()) == (200, "ok")

            # My storage shows trainee1's usage, collected since the demo started.
            storage = collected_usage(portal, started_at, worker_log)
            collected_after = time.monotonic() - began
            assert "sl-trainee1" in storage and 'class="usage-text"' in storage
            assert "Usage unknown" not in storage

            # A first start calibrates the site; a later one finds its references.
            calibrating = demo.wait_for(CALIBRATION, timeout=30)
            if calibrating[1]:
                log_in(portal, "instructor", "storagelab")
                page = portal.get("/lab/calibration/").text
                assert f"of {calibrating[2]}</strong> runs ended" in page, page[:2000]

            assert_a_second_demo_is_refused()
            assert portal.get("/healthz").status_code == 200, "the first demo stopped serving"

        demo.ctrl_c()
        assert demo.wait(timeout=60) != 0
        after = running_services()
        output = demo.output
        assert CLEAN_UP in output, output
        # Gone: the web server (its port, its pid and pid file) and all else this run
        # started.
        assert not port_open()
        assert not alive(web) and "web" not in after and not (RUN_DIR / "web.pid").exists()
        assert not [pid for pid in started if alive(pid)], output
        assert "demo" not in after
        # Left alone: the clean-up stopped only what the run started, and every service
        # found running still runs (a Celery worker found on older code runs restarted).
        assert {int(pid) for pid in STOPPED.findall(output.split(CLEAN_UP)[1])} <= started
        assert not [name for name in before if name not in after], output
        # And the cluster, found running, runs on: its containers are the same.
        assert cluster_containers() == cluster_before, output
    finally:
        demo.close()
        clean_up_after_a_demo()
        if "celery-beat" in found and "celery-beat" not in running_services():
            dev_script("docker/dev/up.sh")  # as the test found it
    print(f"make demo: up in {up_after:.1f} s, quotas shown after {collected_after:.1f} s")


def test_ctrl_c_on_make_demo_piped_to_tee_still_stops_what_it_started(tmp_path) -> None:
    """`make demo | tee demo.log`, as people keep a log: Ctrl-C ends tee as well, and
    the clean-up, whose output has nowhere to go, must still stop what it started."""
    found = running_services()
    if "web" in found or "demo" in found:
        pytest.skip("a `make demo` already runs on this machine: 'make stop' first to test it")
    log_offset = log_size(LOG_DIR / "demo.log")
    demo = Terminal("bash", "-c", f"make demo | tee {tmp_path / 'demo.log'}")
    try:
        demo.wait_for(UP, timeout=180)
        started = {int(pid) for pid in STARTED.findall(demo.output)}
        web = running_services()["web"]
        assert web in started, demo.output

        demo.ctrl_c()
        demo.wait(timeout=60)

        deadline = time.monotonic() + 60
        while (alive(web) or [pid for pid in started if alive(pid)]) and (
            time.monotonic() < deadline
        ):
            time.sleep(0.5)
        assert not alive(web) and not port_open(), "the web server outlived the clean-up"
        assert not [pid for pid in started if alive(pid)]
        assert "web" not in running_services() and "demo" not in running_services()
        # What the clean-up said went to the log, since the terminal's pipe was gone.
        assert CLEAN_UP in log_since(LOG_DIR / "demo.log", log_offset)
    finally:
        demo.close()
        clean_up_after_a_demo()
