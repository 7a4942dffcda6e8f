"""Which proxies the login throttle believes (portal/proxies.py), with the site's default
settings: only a proxy on this machine, unless the site names its own. A private
address is not a proxy: the cluster's nodes have one, and any job could write any
X-Forwarded-For. And the web server does not start where that default would be wrong."""

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from django.test import Client

from portal.proxies import client_address, listening_refusal

ROOT = Path(__file__).resolve().parents[2]
GUNICORN = Path(sys.executable).parent / "gunicorn"
THE_SITES_PROXY = "127.0.0.1"  # a TLS proxy on the portal's own machine
A_CLUSTER_NODE = "172.18.0.5"  # slurm-n1 on the dev cluster's network


def app(environ, start_response):  # what gunicorn serves here: nothing of the portal
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"ok\n"]


@pytest.fixture
def one_proxy(settings) -> None:
    """One proxy in front, as site.env.example says; TRUSTED_PROXIES as its default."""
    settings.TRUSTED_PROXY_COUNT = 1
    settings.TRUSTED_PROXIES_NAMED = False


def log_in(client: Client, username: str, password: str):
    return client.post("/login/", {"username": username, "password": password})


def checked(response) -> bool:
    """The password was checked (and found wrong), not refused before."""
    return response.status_code == 200 and "did not match" in response.content.decode()


@pytest.mark.django_db
def test_a_header_forged_on_a_cluster_node_counts_the_nodes_address(
    one_proxy, make_user, rf
) -> None:
    """Five wrong passwords, each claiming another address: the sixth try, even with
    the right password, is paused."""
    request = rf.get("/", REMOTE_ADDR=A_CLUSTER_NODE, HTTP_X_FORWARDED_FOR="203.0.113.9")
    assert client_address(request) == A_CLUSTER_NODE
    via_proxy = rf.get("/", REMOTE_ADDR=THE_SITES_PROXY, HTTP_X_FORWARDED_FOR="203.0.113.9")
    assert client_address(via_proxy) == "203.0.113.9"

    ada = make_user(password="Ada-pass-1")

    def from_the_node(forged: str) -> Client:
        return Client(REMOTE_ADDR=A_CLUSTER_NODE, HTTP_X_FORWARDED_FOR=forged)

    answers = [log_in(from_the_node(f"203.0.113.{i}"), ada.username, "guess") for i in range(5)]
    sixth = log_in(from_the_node("203.0.113.99"), ada.username, "Ada-pass-1")

    # The fifth failure pauses the pair (LOGIN_FAILURE_LIMIT): the node's one address.
    assert all(checked(a) for a in answers[:4]) and answers[4].status_code == 429
    assert sixth.status_code == 429 and "paused for 15 minutes" in sixth.content.decode()


@pytest.mark.django_db
def test_a_forged_header_cannot_claim_a_users_usual_address(one_proxy, make_user) -> None:
    """Ada logs in from her office through the site's proxy; during an attack on her
    name, a job that writes her office's address still waits its turn."""
    ada = make_user(password="Ada-pass-1")
    office = Client(REMOTE_ADDR=THE_SITES_PROXY, HTTP_X_FORWARDED_FOR="192.0.2.10")
    assert log_in(office, ada.username, "Ada-pass-1").status_code == 302
    office.post("/logout/")
    for i in range(9):  # the free tries for her name, from many addresses
        elsewhere = Client(REMOTE_ADDR=THE_SITES_PROXY, HTTP_X_FORWARDED_FOR=f"198.51.100.{i}")
        assert checked(log_in(elsewhere, ada.username, "guess"))
    # The attacker's next try takes the first turn; the one after it waits for the next.
    forged = Client(REMOTE_ADDR=A_CLUSTER_NODE, HTTP_X_FORWARDED_FOR="192.0.2.10")
    assert checked(log_in(forged, ada.username, "guess"))

    waiting = log_in(forged, ada.username, "guess")

    assert waiting.status_code == 429 and "try again in" in waiting.content.decode()
    # Ada, from her office, is not held up.
    assert log_in(office, ada.username, "Ada-pass-1").status_code == 302


# --- where the web server listens ------------------------------------------------------------


@pytest.mark.parametrize(
    "binds",
    [["unix:/run/storagelab/web.sock"], ["127.0.0.1:8000", "[::1]:8000"], ["localhost:8000"]],
)
def test_on_this_machine_alone_the_default_proxies_are_right(one_proxy, binds) -> None:
    assert listening_refusal(binds) is None


@pytest.mark.parametrize(
    "bind", ["0.0.0.0:8000", "[::]:8000", "172.18.0.1:8000", "fd://3", "portal.example.org:80"]
)
def test_beyond_it_a_proxy_count_needs_the_proxies_named(one_proxy, settings, bind) -> None:
    why = listening_refusal(["127.0.0.1:8000", bind])
    assert why and bind in why and "TRUSTED_PROXIES names no proxy" in why

    settings.TRUSTED_PROXIES_NAMED = True
    assert listening_refusal([bind]) is None
    settings.TRUSTED_PROXIES_NAMED, settings.TRUSTED_PROXY_COUNT = False, 0
    assert listening_refusal([bind]) is None  # no proxy: no header is believed


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def gunicorn(bind: str, **env: str) -> subprocess.Popen:
    """gunicorn as the image starts it (docker/gunicorn.conf.py), serving `app`."""
    environ = {k: v for k, v in os.environ.items() if k != "TRUSTED_PROXIES"}
    environ.update(GUNICORN_BIND=bind, GUNICORN_WORKERS="1", **env)
    command = [GUNICORN, "-c", "docker/gunicorn.conf.py", "--no-control-socket", f"{__name__}:app"]
    return subprocess.Popen(
        command, cwd=ROOT, env=environ, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def test_gunicorn_refuses_to_start_beyond_this_machine_with_a_proxy_count_and_none_named() -> None:
    port = free_port()
    server = gunicorn(f"0.0.0.0:{port}", TRUSTED_PROXY_COUNT="1")
    try:
        said = server.communicate(timeout=30)[0]
    except subprocess.TimeoutExpired:
        server.terminate()
        server.communicate(timeout=20)
        raise AssertionError("gunicorn started, listening on every address") from None

    assert server.returncode == 1
    assert (
        f"Error: TRUSTED_PROXY_COUNT is 1 and the web server would listen on 0.0.0.0:{port}" in said
    )
    with pytest.raises(httpx.TransportError):
        httpx.get(f"http://127.0.0.1:{port}/", timeout=2)


def test_gunicorn_starts_on_loopback_with_a_proxy_count() -> None:
    port = free_port()
    server = gunicorn(f"127.0.0.1:{port}", TRUSTED_PROXY_COUNT="1")
    try:
        deadline = time.monotonic() + 30
        while True:
            assert server.poll() is None, server.communicate()[0]
            try:
                assert httpx.get(f"http://127.0.0.1:{port}/", timeout=2).text == "ok\n"
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "gunicorn did not answer in 30 s"
                time.sleep(0.2)
    finally:
        server.terminate()
        server.communicate(timeout=20)
