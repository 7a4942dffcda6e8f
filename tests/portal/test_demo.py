"""The front door: the README's `make demo`, started as a user starts it (in a
terminal, as root, from the repo root, with a plain shell's environment), serves
the portal until Ctrl-C, and Ctrl-C stops what that run started and nothing else.

It serves the demo site (database `storagelab`, Redis db 0), not the tests' own:
the one a newcomer sees.
"""

import os
import re
import socket
import subprocess
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

pytestmark = pytest.mark.live

ROOT = Path(__file__).resolve().parents[2]
RUN_DIR = Path(os.getenv("STORAGELAB_RUN_DIR", "/run/storagelab"))
ADDRESS = ("127.0.0.1", 8000)
UP = re.compile(r"Storage Lab is up: (http://\S+)")
# What the dev scripts say when they start or stop a service: "started web (pid 42)".
STARTED = re.compile(r"\] started .*?\(pid (\d+)\)")
STOPPED = re.compile(r"\] stopped .*?\(pid (\d+)\)")
COLLECTED = re.compile(r"Collected (\d{4}-\d\d-\d\d \d\d:\d\d) UTC")


class Terminal:
    """A command in a pseudo-terminal of its own, which is its controlling
    terminal: what a user's shell gives `make demo`. Ctrl-C is a byte typed."""

    def __init__(self, *argv: str):
        master, slave = os.openpty()
        self.proc = subprocess.Popen(
            argv,
            cwd=ROOT,
            env={
                "PATH": os.environ["PATH"],
                "HOME": os.environ.get("HOME", "/root"),
                "LANG": "C.UTF-8",
                "TERM": "xterm",
            },
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
        while True:
            try:
                chunk = os.read(self.master, 4096)
            except OSError:  # the terminal closed: the command ended
                return
            if not chunk:
                return
            self.output += chunk.decode(errors="replace")

    def wait_for(self, pattern: re.Pattern, timeout: float) -> re.Match:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if match := pattern.search(self.output):
                return match
            if self.proc.poll() is not None and not self._reader.is_alive():
                break
            time.sleep(0.2)
        raise AssertionError(f"no {pattern.pattern!r} in:\n{self.output}")

    def ctrl_c(self) -> None:
        os.write(self.master, b"\x03")

    def wait(self, timeout: float) -> int:
        code = self.proc.wait(timeout=timeout)
        self._reader.join(timeout=5)
        return code

    def close(self) -> None:
        if self.proc.poll() is None:
            self.ctrl_c()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        os.close(self.master)


def _take_terminal() -> None:
    import fcntl
    import termios

    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


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
        text = pidfile.read_text().strip()
        if text.isdigit() and alive(int(text)):
            found[pidfile.stem] = int(text)
    return found


def port_open() -> bool:
    try:
        with socket.create_connection(ADDRESS, timeout=1):
            return True
    except OSError:
        return False


def make_demo() -> Terminal:
    return Terminal("make", "demo")


def assert_a_second_demo_is_refused() -> None:
    second = make_demo()
    try:
        assert second.wait(timeout=60) != 0
        assert "Storage Lab already serves http://127.0.0.1:8000" in second.output
        assert "make stop" in second.output
    finally:
        second.close()


def log_in(portal: httpx.Client, username: str, password: str) -> None:
    portal.get("/login/")
    response = portal.post(
        "/login/",
        data={
            "username": username,
            "password": password,
            "csrfmiddlewaretoken": portal.cookies["csrftoken"],
        },
    )
    assert response.status_code == 200, response.text
    assert not str(response.url).endswith("/login/"), "the login did not go through"


def test_make_demo_serves_until_ctrl_c_and_stops_only_what_it_started() -> None:
    if "web" in running_services():
        # A developer's own demo: leave it alone, but it must refuse a second one.
        assert_a_second_demo_is_refused()
        pytest.skip("a demo already serves on this machine: 'make stop' first to test it all")
    if port_open():
        pytest.fail(f"another program listens on {ADDRESS}: the demo needs that port")

    # A service this run must start (and stop again): the demo's Celery beat.
    subprocess.run([str(ROOT / "docker/dev/stop.sh"), "celery-beat"], check=True)
    before = running_services()
    started_at = datetime.now(UTC).replace(second=0, microsecond=0)
    demo = make_demo()
    try:
        url = demo.wait_for(UP, timeout=240)[1]
        up_to_now = demo.output
        started = {int(pid) for pid in STARTED.findall(up_to_now)}
        replaced = {int(pid) for pid in STOPPED.findall(up_to_now)}  # from older code
        assert running_services()["celery-beat"] in started

        with httpx.Client(base_url=url, follow_redirects=True, timeout=30) as portal:
            log_in(portal, "trainee1", "storagelab")
            lab = portal.get("/lab/")
            assert lab.status_code == 200 and "1a" in lab.text and "trainee1" in lab.text
            assert "Storage course (demo)" in portal.get("/courses/").text
            health = portal.get("/healthz")
            assert (health.status_code, health.text.strip()) == (200, "ok")
            # My storage shows usage collected at start-up, not "never collected".
            collected = None
            for _ in range(60):
                if match := COLLECTED.search(portal.get("/storage/").text):
                    collected = datetime.strptime(match[1], "%Y-%m-%d %H:%M").replace(tzinfo=UTC)
                    if collected >= started_at:
                        break
                time.sleep(0.5)
            assert collected and collected >= started_at, "quotas were not collected at start"

            assert_a_second_demo_is_refused()
            assert portal.get("/healthz").status_code == 200  # the first one still serves

        demo.ctrl_c()
        assert demo.wait(timeout=60) != 0
        assert "stopping what this run started" in demo.output
    finally:
        demo.close()
        if port_open():  # whatever failed above, no demo server is left behind
            subprocess.run([str(ROOT / "docker/dev/stop.sh"), "web"], check=False)

    assert not port_open()
    assert not [pid for pid in started if alive(pid)], demo.output
    left_alone = {name: pid for name, pid in before.items() if pid not in replaced}
    assert left_alone and all(alive(pid) for pid in left_alone.values()), demo.output
