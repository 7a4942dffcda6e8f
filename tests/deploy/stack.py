"""The container image and the compose stack, driven as a site drives them: the images
built by docker/image.sh (`make image`), then docker/compose.yaml with
docker/compose.hostnet.yaml (on the host's network: the stack reaches the dev cluster's
slurmrestd, and the cluster's jobs reach the stack's web server, all on 127.0.0.1),
under a project name of its own and on ports nobody uses."""

import os
import re
import secrets
import shutil
import socket
import subprocess
import time
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

from tests.cluster24 import bridge_address

ROOT = Path(__file__).resolve().parents[2]
DOCKER_DIR = ROOT / "docker"
# Debian's client and Compose (docker/dev/docker.sh installs them), whatever else is on
# the PATH; STORAGELAB_COMPOSE="docker compose" runs the test with Compose v2.
DOCKER = os.getenv("DOCKER", "/usr/bin/docker")
COMPOSE = os.getenv("STORAGELAB_COMPOSE", "docker-compose").split()
# The portal image's user (its Dockerfile's default), and the database image's group:
# the secrets are theirs.
PORTAL_UID = int(re.search(r"ARG PORTAL_UID=(\d+)", (DOCKER_DIR / "Dockerfile").read_text())[1])
DB_GID = 999
PROJECT_PREFIX = "sltest"


def build_images() -> dict[str, str]:
    """The images to run, as docker/image.sh names them on its stdout."""
    done = subprocess.run(
        ["bash", str(DOCKER_DIR / "image.sh")], capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, f"docker/image.sh failed:\n{done.stderr[-4000:]}"
    images = dict(line.split("=", 1) for line in done.stdout.split())
    assert images.keys() == {"STORAGELAB_IMAGE", "POSTGRES_IMAGE", "REDIS_IMAGE"}, done.stdout
    return images


def free_ports(count: int) -> list[int]:
    """Ports nobody listens on now, on 127.0.0.1 (another run of this test may be up)."""
    with ExitStack() as stack:
        sockets = [stack.enter_context(socket.socket()) for _ in range(count)]
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]


def docker(*args: str) -> list[str]:
    """What a docker command prints, line by line."""
    done = subprocess.run([DOCKER, *args], capture_output=True, text=True, check=True, timeout=60)
    return done.stdout.splitlines()


def remove_stale_stacks(older_than: timedelta = timedelta(hours=1)) -> list[str]:
    """Stacks of test runs killed before their teardown (no run lasts an hour), with
    their volumes and networks: their services restart with Docker and hold memory."""
    fmt = '{{.Label "com.docker.compose.project"}}\t{{.CreatedAt}}'
    stale = set()
    for line in docker(
        "ps", "--all", "--filter", "label=com.docker.compose.project", "--format", fmt
    ):
        project, created = line.split("\t")
        # "2026-11-23 06:15:10 +0000 UTC"
        when = datetime.strptime(created.rsplit(" ", 1)[0], "%Y-%m-%d %H:%M:%S %z")
        if project.startswith(PROJECT_PREFIX) and datetime.now(UTC) - when > older_than:
            stale.add(project)
    for project in stale:
        label = f"label=com.docker.compose.project={project}"
        if containers := docker("ps", "--all", "--quiet", "--filter", label):
            docker("rm", "--force", "--volumes", *containers)
        for kind in ("volume", "network"):
            if names := docker(kind, "ls", "--quiet", "--filter", label):
                docker(kind, "rm", *names)
    return sorted(stale)


class Stack:
    """One compose project, its site.env and secrets in `workdir`."""

    def __init__(self, workdir: Path, images: dict[str, str], settings: dict[str, str]):
        self.project = f"{PROJECT_PREFIX}{secrets.token_hex(4)}"
        self.label = f"label=com.docker.compose.project={self.project}"
        self.timings: dict[str, float] = {}  # seconds, by step, for the report
        db_port, redis_port, web_port = free_ports(3)
        self.url = f"http://127.0.0.1:{web_port}"
        secrets_dir = workdir / "secrets"
        write_secrets(secrets_dir)
        env_file = workdir / "site.env"
        env_file.write_text("".join(f"{name}={value}\n" for name, value in settings.items()))
        self.env = {
            **os.environ,
            **images,
            "STORAGELAB_ENV_FILE": str(env_file),
            "STORAGELAB_SECRETS_DIR": str(secrets_dir),
            "STORAGELAB_DB_PORT": str(db_port),
            "STORAGELAB_REDIS_PORT": str(redis_port),
            "STORAGELAB_WEB_PORT": str(web_port),
            # The dev cluster's nodes post the jobs' results to this host's address on
            # their network: the web service listens there too.
            "STORAGELAB_CALLBACK_HOST": bridge_address(),
            "STORAGELAB_WEB_ALSO": f",{bridge_address()}:{web_port}",
        }

    def compose(self, *args: str, timeout: float = 300) -> str:
        files = ["-f", "compose.yaml", "-f", "compose.hostnet.yaml"]
        argv = [*COMPOSE, "--project-name", self.project, *files, *args]
        done = subprocess.run(
            argv, cwd=DOCKER_DIR, env=self.env, capture_output=True, text=True, timeout=timeout
        )
        assert done.returncode == 0, f"compose {' '.join(args)} failed:\n{done.stderr}"
        return done.stdout

    def manage(self, *args: str) -> str:
        """manage.py in the running web container, as the image's user."""
        return self.compose("exec", "-T", "web", "/app/docker/entrypoint.sh", "manage", *args)

    def wait_for_page(self, path: str, timeout: float = 120) -> float:
        """Seconds until `path` answers 200."""
        began = time.monotonic()
        while True:
            try:
                if httpx.get(self.url + path, timeout=5).status_code == 200:
                    return time.monotonic() - began
            except httpx.TransportError:
                pass
            if time.monotonic() - began > timeout:
                logs = self.logs()
                raise AssertionError(f"{path} did not answer within {timeout:.0f} s:\n{logs}")
            time.sleep(0.25)

    def crashed(self) -> list[str]:
        """Services whose container stopped or restarts (migrate ends, with 0)."""
        fmt = '{{.Label "com.docker.compose.service"}}\t{{.Status}}'
        lines = docker("ps", "--all", "--filter", self.label, "--format", fmt)
        return [
            line.replace("\t", ": ")
            for line in lines
            if "\tUp " not in line and not line.startswith("migrate\tExited (0)")
        ]

    def logs(self) -> str:
        try:
            return self.compose("logs", "--no-color", "--tail", "40", timeout=60)
        except (AssertionError, subprocess.TimeoutExpired) as e:
            return f"(no logs: {e})"

    def down(self) -> None:
        self.compose("down", "--volumes", "--remove-orphans", "--timeout", "10", timeout=180)

    def leftovers(self) -> list[str]:
        """Containers, volumes and networks of the project still there (by its label,
        or by its name as a prefix)."""
        found = {f"container {c}" for c in docker("ps", "--all", "--quiet", "--filter", self.label)}
        for kind in ("volume", "network"):
            labelled = set(docker(kind, "ls", "--filter", self.label, "--format", "{{.Name}}"))
            for name in docker(kind, "ls", "--format", "{{.Name}}"):
                if name in labelled or name.startswith(f"{self.project}_"):
                    found.add(f"{kind} {name}")
        return sorted(found)


def write_secrets(directory: Path) -> None:
    """As a site keeps them: files the containers' users alone may read. The Slurm key
    is a copy of the dev cluster's (root's), made readable to the portal's UID."""
    directory.mkdir()
    directory.chmod(0o755)  # the mount point: the portal's user lists it
    (directory / "django_secret_key").write_text(secrets.token_urlsafe(50) + "\n")
    (directory / "db_password").write_text(secrets.token_urlsafe(24) + "\n")
    (directory / "redis_password").write_text(secrets.token_urlsafe(24) + "\n")
    key = Path(os.getenv("SLURM_JWT_KEY_FILE", "/etc/slurm/jwt_hs256.key"))
    shutil.copyfile(key, directory / "slurm_jwt_key")
    for path in directory.iterdir():
        os.chown(path, PORTAL_UID, DB_GID)
        path.chmod(0o440)
