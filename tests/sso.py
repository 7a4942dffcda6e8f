"""Single sign-on for the login tests (tests/conftest.py imports these fixtures for
every test): a real OpenID provider, oidc-provider-mock in a process of its own on a
free loopback port; and the settings LOGIN_METHOD=oidc or remote_user makes.

The provider's login form asks for a subject ("sub") and logs that subject in with
the claims last PUT for it; any client id and secret are accepted."""

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
import requests

from tests.names import unique_name

PROVIDER_NAME = "Test IdP"
INSTRUCTOR_GROUP = "hpc-instructors"


@dataclass(frozen=True)
class Provider:
    url: str

    def add_user(self, **claims: object) -> str:
        """A user of the provider with these claims; returns its subject."""
        sub = unique_name("sub")
        answer = requests.put(f"{self.url}/users/{sub}", json=claims, timeout=5)
        answer.raise_for_status()
        return sub


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def oidc_provider(tmp_path_factory) -> Iterator[Provider]:
    port = _free_port()
    log = tmp_path_factory.mktemp("oidc") / "provider.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "oidc_provider_mock", "--host", "127.0.0.1"]
            + ["--port", str(port), "--require-nonce", "true"],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "NO_COLOR": "1"},
        )
    provider = Provider(f"http://127.0.0.1:{port}")
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                requests.get(f"{provider.url}/.well-known/openid-configuration", timeout=1)
                break
            except requests.ConnectionError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the OIDC provider did not start: {log.read_text()}")
                time.sleep(0.1)
        yield provider
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture
def oidc_login(settings, oidc_provider: Provider) -> Provider:
    """The portal with LOGIN_METHOD=oidc against the provider, as a site's environment
    file would set it (`manage.py oidc_endpoints` prints these endpoints)."""
    settings.LOGIN_METHOD = "oidc"
    settings.OIDC_PROVIDER_NAME = PROVIDER_NAME
    settings.OIDC_RP_CLIENT_ID = "storagelab"
    settings.OIDC_RP_CLIENT_SECRET = "storagelab-secret"
    settings.OIDC_OP_AUTHORIZATION_ENDPOINT = f"{oidc_provider.url}/oauth2/authorize"
    settings.OIDC_OP_TOKEN_ENDPOINT = f"{oidc_provider.url}/oauth2/token"
    settings.OIDC_OP_USER_ENDPOINT = f"{oidc_provider.url}/userinfo"
    settings.OIDC_OP_JWKS_ENDPOINT = f"{oidc_provider.url}/jwks"
    settings.OIDC_INSTRUCTOR_GROUPS = [INSTRUCTOR_GROUP]
    # The mock signs with its one key and names no "kid", which Keycloak and other
    # providers always do; mozilla-django-oidc matches keys by it unless told not to.
    settings.OIDC_VERIFY_KID = False
    settings.AUTHENTICATION_BACKENDS = [
        *settings.AUTHENTICATION_BACKENDS,
        "portal.oidc.OIDCBackend",
    ]
    return oidc_provider


@pytest.fixture
def remote_user_login(settings) -> None:
    """The settings LOGIN_METHOD=remote_user makes (portal/settings.py). Middleware is
    loaded by each server or test client as it starts: start those after this."""
    settings.LOGIN_METHOD = "remote_user"
    settings.AUTHENTICATION_BACKENDS = [
        *settings.AUTHENTICATION_BACKENDS,
        "portal.remote_user.RemoteUserBackend",
    ]
    middleware = list(settings.MIDDLEWARE)
    auth = middleware.index("django.contrib.auth.middleware.AuthenticationMiddleware")
    middleware.insert(auth + 1, "portal.remote_user.RemoteUserMiddleware")
    settings.MIDDLEWARE = middleware
