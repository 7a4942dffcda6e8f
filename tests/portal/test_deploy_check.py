"""docker/site.env.example, as a site fills it in, passes Django's own deployment
check at its strictest; a value that undoes it does not pass."""

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docker" / "site.env.example"


def site_env(tmp_path: Path) -> dict[str, str]:
    """The example's values; each secret file it names is made, holding a secret."""
    env = {}
    for line in EXAMPLE.read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            name, _, value = line.partition("=")
            env[name.strip()] = value.strip()
    for name, value in env.items():
        if name.endswith("_FILE") or name == "SLURMRESTD_CA_BUNDLE":
            secret = tmp_path / Path(value).name
            secret.write_text(secrets.token_urlsafe(50))
            env[name] = str(secret)
    return env


def deploy_check(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    # Only the site's values: none of the dev machine's environment leaks in.
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env={"PATH": os.environ["PATH"], "HOME": str(ROOT), **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    "logins",
    [
        {},
        {
            "LOGIN_METHOD": "remote_user",
            "REMOTE_USER_HEADER": "HTTP_X_REMOTE_USER",
            "REMOTE_USER_PROXIES": "10.0.0.5",  # as the example's commented lines say
        },
    ],
    ids=["oidc", "remote_user"],
)
def test_the_site_example_passes_the_deploy_check(tmp_path: Path, logins: dict) -> None:
    checked = deploy_check({**site_env(tmp_path), **logins})

    assert checked.returncode == 0, checked.stderr
    assert "System check identified no issues" in checked.stdout


def test_a_value_that_weakens_the_site_fails_the_check(tmp_path: Path) -> None:
    env = site_env(tmp_path)

    for weakened, warning in (
        ({"DEBUG": "true"}, "security.W018"),
        ({"SECURE_HSTS_SECONDS": "0"}, "security.W004"),
        ({"SECURE_SSL_REDIRECT": "false"}, "security.W008"),
        ({"SECURE_COOKIES": "false"}, "security.W012"),
    ):
        checked = deploy_check({**env, **weakened})
        assert checked.returncode != 0 and warning in checked.stderr, weakened


def test_a_plain_http_callback_behind_the_https_redirect_is_refused(tmp_path: Path) -> None:
    env = {**site_env(tmp_path), "PORTAL_CALLBACK_URL": "http://storagelab.hpc.example.org"}

    checked = deploy_check(env)

    assert checked.returncode != 0
    assert "storagelab.E001" in checked.stderr and "results would be lost" in checked.stderr


def test_a_proxy_count_with_no_proxy_named_is_refused_where_the_portal_listens_widely(
    tmp_path: Path,
) -> None:
    """The image listens on 0.0.0.0: without TRUSTED_PROXIES only a proxy on this machine
    would be believed, and every client behind the site's would share its address."""
    env = site_env(tmp_path)
    del env["TRUSTED_PROXIES"]

    refused = deploy_check(env)
    on_loopback = deploy_check({**env, "GUNICORN_BIND": "127.0.0.1:8000"})

    assert refused.returncode != 0 and "storagelab.E002" in refused.stderr
    assert "TRUSTED_PROXIES names no proxy" in refused.stderr
    assert on_loopback.returncode == 0, on_loopback.stderr
