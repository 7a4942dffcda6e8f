"""The multi-node test cluster of Slurm 24.11, or 26.05 (docker/cluster/), for the tests that
run against it: started once per session if it does not answer, its own client, and
accounts that exist on its nodes too."""

import os
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import suppress
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from pytest_django.live_server_helper import LiveServer

from exercises.catalogue.models import StorageTarget
from jobs.slurm import SlurmClient, SlurmJob, get_client
from jobs.slurm.auth import TokenSigner
from tests.names import unique_name

ROOT = Path(__file__).resolve().parents[1]
# Which Slurm the cluster runs (docker/cluster/start.sh reads the same variable), and
# what its slurmrestd then says: the newest API version it serves, the cluster's name.
RELEASE = os.getenv("CLUSTER_SLURM", "26.05")
API_VERSION = {"24.11": "v0.0.42", "26.05": "v0.0.45"}[RELEASE]
CLUSTER_NAME = f"storagelab{RELEASE.split('.')[0]}"
REST_URL = "http://127.0.0.1:6821"
JWT_KEY = Path("/var/lib/storagelab/cluster/etc/jwt_hs256.key")
NODES = ("slurm-n1", "slurm-n2")


def answers() -> bool:
    try:
        httpx.get(f"{REST_URL}/openapi/v3", timeout=2)
    except httpx.HTTPError:
        return False
    return True


@pytest.fixture(scope="session")
def cluster24() -> str:
    """The cluster's slurmrestd URL; start.sh runs once if it does not answer."""
    if not answers():
        subprocess.run([str(ROOT / "docker/cluster/start.sh")], check=True, timeout=600)
    return REST_URL


@pytest.fixture
def cluster24_username(cluster24, make_cluster_username: Callable[[], str]) -> str:
    """The user name of a cluster account of this test's own, on the host and on every
    node (make_cluster_username gives it to the nodes too)."""
    return make_cluster_username()


@pytest.fixture(scope="session")
def portal_for_nodes(cluster24, live_server) -> Iterator[str]:
    """The portal as the cluster's nodes reach it: a second live server, on the host's
    address on the cluster's network (the first one listens on localhost only)."""
    server = LiveServer(f"{bridge_address()}:0")
    yield server.url
    server.stop()


@pytest.fixture
def slurm_24(settings, cluster24) -> Iterator[None]:
    """The portal's Slurm settings pointed at the 24.11 cluster; its client (get_client
    keeps one per process) made afresh for the test, and again after it."""
    get_client.cache_clear()
    settings.SLURMRESTD_URL = cluster24
    settings.SLURM_JWT_KEY_FILE = str(JWT_KEY)
    settings.SLURM_SERVICE_USER = "slurmrestd"  # slurmrestd's own user in the image
    yield
    get_client.cache_clear()


@pytest.fixture
def portal_on_24(slurm_24, settings, portal_for_nodes, celery_worker_thread) -> None:
    """The whole portal on the 24.11 cluster: its callbacks to the address nodes reach."""
    settings.PORTAL_CALLBACK_URL = portal_for_nodes
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, urlsplit(portal_for_nodes).hostname]


@pytest.fixture
def gluster_target(site) -> StorageTarget:
    """The cluster's filesystem over the network: a GlusterFS volume every node mounts
    (docker/cluster/start.sh); each account's directory comes with it (account.sh)."""
    return StorageTarget.objects.create(
        profile=site, key=unique_name("global"), name="$GLOBAL", filesystem="GlusterFS",
        path_template="/gluster/{user}",
    )  # fmt: skip


@pytest.fixture
def node_tmpdir_target(site) -> StorageTarget:
    """The job's own $TMPDIR, which the cluster's prolog makes on each of its nodes (in
    the node's memory) and its epilog removes."""
    return StorageTarget.objects.create(
        profile=site, key=unique_name("tmp"), name="$TMPDIR", filesystem="tmpfs",
        path_template="$TMPDIR", in_memory=True, persistent=False, shared=False,
    )  # fmt: skip


def client24(service_user: str) -> SlurmClient:
    return SlurmClient(
        REST_URL, TokenSigner(str(JWT_KEY), 300), service_user=service_user, timeout=10
    )


def on_node(node: str, *command: str) -> str:
    """What `command` prints on a node of the cluster."""
    found = subprocess.run(
        ["docker", "exec", node, *command], capture_output=True, text=True, timeout=30
    )
    return found.stdout


def wait_until(client: SlurmClient, user: str, job_id: int, done: Callable[[SlurmJob], bool],
               timeout: float = 60) -> SlurmJob:  # fmt: skip
    deadline = time.monotonic() + timeout
    while True:
        job = client.job(user, job_id)
        if done(job):
            return job
        if time.monotonic() > deadline:
            raise AssertionError(f"job {job_id} still {job.state} after {timeout}s")
        time.sleep(0.3)


class CuttableLink:
    """A TCP link from the cluster's network to the portal that a test can cut: while
    cut, every connection is closed at once, as a network that drops them would."""

    def __init__(self, host: str, to_port: int):
        self.to_port = to_port
        self.cut = False
        self.listener = socket.create_server((host, 0))
        self.url = f"http://{host}:{self.listener.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return  # closed
            if self.cut:
                client.close()
                continue
            server = socket.create_connection(("127.0.0.1", self.to_port))
            for a, b, sent in ((client, server, self.sent), (server, client, None)):
                threading.Thread(target=self._pump, args=(a, b, sent), daemon=True).start()

    def sent(self, data: bytes) -> None:
        """What a client sent through the link (a subclass may look at it)."""

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket, seen=None) -> None:
        with suppress(OSError):
            while data := source.recv(65536):
                if seen:
                    seen(data)
                sink.sendall(data)
        with suppress(OSError):
            sink.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        self.listener.close()


def bridge_address() -> str:
    """The host's address on the cluster's network, which the nodes reach."""
    return subprocess.run(
        ["docker", "network", "inspect", "-f", "{{(index .IPAM.Config 0).Gateway}}",
         "storagelab-cluster"],
        capture_output=True, text=True, check=True, timeout=30,
    ).stdout.strip()  # fmt: skip
