"""gunicorn's access log, with the image's settings (docker/gunicorn.conf.py), keeps no
query string: the OIDC callback's carries the login's code and state."""

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

# Nothing of Django here: gunicorn imports this module for `app`.
ROOT = Path(__file__).resolve().parents[2]
GUNICORN = Path(sys.executable).parent / "gunicorn"


def app(environ, start_response):  # the WSGI app gunicorn serves here
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"ok\n"]


def test_a_login_codes_query_string_never_reaches_the_access_log(tmp_path: Path) -> None:
    socket = tmp_path / "gunicorn.sock"
    env = {**os.environ, "GUNICORN_BIND": f"unix:{socket}", "GUNICORN_WORKERS": "1"}
    command = [GUNICORN, "-c", "docker/gunicorn.conf.py", "--no-control-socket"]
    server = subprocess.Popen(
        [*command, f"{__name__}:app"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 20
        while not socket.exists():
            assert server.poll() is None, server.communicate()[0]
            assert time.monotonic() < deadline, "gunicorn did not start in 20 s"
            time.sleep(0.1)
        with httpx.Client(transport=httpx.HTTPTransport(uds=str(socket)), timeout=10) as web:
            callback = "http://portal/oidc/callback/?code=SECRET-CODE&state=SECRET-STATE"
            answer = web.get(callback, headers={"Referer": "https://idp.example.org/?x=SECRET"})
        assert answer.status_code == 200
    finally:
        server.terminate()
        log = server.communicate(timeout=20)[0]

    assert '"GET /oidc/callback/ HTTP/1.1" 200' in log
    assert "SECRET" not in log
