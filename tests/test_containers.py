"""The containers of docker/compose.yaml reach only what they need: none runs as root;
every service of the portal's image but one drops every capability and may gain none;
the darshan worker, which must start each log's reader as the sandbox user, keeps only
the three capabilities storagelab-sandbox's file capabilities need (SETUID, SETGID, KILL:
to take the reader down with it), never
DAC_READ_SEARCH (with Docker's default seccomp profile it opens open_by_handle_at, the
known way out of a container through its bind mounts), and sees only the secrets it
uses, never the Slurm JWT key."""

import copy
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = ROOT / "docker" / "compose.yaml"
PORTAL_IMAGE = "${STORAGELAB_IMAGE:-storagelab:latest}"
ROOT_USERS = {"0", "root"}
# What the darshan worker reads: Django's key, the database's and the broker's password.
DARSHAN_SECRETS = {"django_secret_key", "db_password", "redis_password"}
SANDBOX_CAPABILITIES = {"SETUID", "SETGID", "KILL"}


def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


def secrets_seen(service: dict) -> set[str]:
    """The secret files a service sees: "*" for the whole directory."""
    seen = set()
    for volume in service.get("volumes", []):
        # SOURCE:TARGET[:MODE], the source may hold a ":" of its own (${DIR:-./secrets}).
        parts = volume.rsplit(":", 2)
        target = parts[-2] if parts[-1] in ("ro", "rw") else parts[-1]
        if target == "/run/secrets":
            seen.add("*")
        elif target.startswith("/run/secrets/"):
            seen.add(target.removeprefix("/run/secrets/"))
    return seen | set(service.get("secrets", []))


def problems(services: dict) -> list[str]:
    """What in `services` lets a container reach more than it should."""
    found = []
    for name, service in services.items():
        if service.get("image") != PORTAL_IMAGE:
            continue
        user = str(service.get("user", "")).partition(":")[0]
        if user in ROOT_USERS:
            found.append(f"{name} runs as root")
        if "ALL" not in service.get("cap_drop", []):
            found.append(f"{name} keeps Docker's default capabilities")
        added = set(service.get("cap_add", []))
        options = service.get("security_opt", [])
        if name == "darshan":
            if added - SANDBOX_CAPABILITIES:
                found.append(f"darshan adds {sorted(added - SANDBOX_CAPABILITIES)}")
            if secrets_seen(service) - DARSHAN_SECRETS:
                found.append(f"darshan sees {sorted(secrets_seen(service) - DARSHAN_SECRETS)}")
        else:
            if added:
                found.append(f"{name} adds {sorted(added)}")
            if "no-new-privileges:true" not in options:
                found.append(f"{name} may gain privileges")
    return found


def test_no_container_reaches_more_than_it_needs() -> None:
    services = compose()["services"]
    assert {"web", "worker", "quotas", "results", "darshan", "beat", "migrate"} <= set(services)
    assert problems(services) == []
    # The darshan worker keeps what its reader's start needs, and sees what it reads.
    darshan = services["darshan"]
    assert set(darshan["cap_add"]) == SANDBOX_CAPABILITIES
    assert secrets_seen(darshan) == DARSHAN_SECRETS


@pytest.mark.parametrize(
    "change",
    [
        {"user": "0:0"},
        {"user": "root"},
        {"cap_add": ["SETUID", "SETGID", "KILL", "DAC_READ_SEARCH"]},
        {"cap_add": ["SETUID", "SETGID", "KILL", "SYS_PTRACE"]},
        {"volumes": ["./secrets:/run/secrets:ro"]},
        {"volumes": ["./secrets/slurm_jwt_key:/run/secrets/slurm_jwt_key:ro"]},
    ],
    ids=["root", "root-by-name", "dac-read-search", "ptrace", "every-secret", "jwt-key"],
)
def test_the_check_fails_on_the_darshan_worker_of_before(change: dict) -> None:
    services = copy.deepcopy(compose()["services"])
    services["darshan"] |= change
    assert problems(services)


def test_the_check_fails_on_a_service_that_may_gain_privileges() -> None:
    services = copy.deepcopy(compose()["services"])
    services["web"]["security_opt"] = []
    services["worker"]["cap_add"] = ["SYS_PTRACE"]
    assert problems(services) == ["web may gain privileges", "worker adds ['SYS_PTRACE']"]
