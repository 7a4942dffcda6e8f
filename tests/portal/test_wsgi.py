"""A web worker opens its broker connection as it starts (portal/wsgi.py), so that a
trainee's first start of runs does not; a broker that is down then must not keep the
worker from starting."""

import os
import socket
import subprocess
import sys

from tests.conftest import ROOT


def test_a_web_worker_starts_with_the_broker_down_and_says_so() -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "REDIS_URL": f"redis://127.0.0.1:{port}/0", "LOG_LEVEL": "INFO"}

    worker = subprocess.run(
        [sys.executable, "-c", "import portal.wsgi; print(portal.wsgi.application)"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=30,
    )  # fmt: skip

    assert worker.returncode == 0, worker.stderr
    assert "WSGIHandler" in worker.stdout
    assert "The broker did not answer as this web worker started" in worker.stderr
