"""The login settings a site gets wrong are refused at start, saying what to set;
the ones it gets right install what the method needs."""

import os
import subprocess
import sys

from tests.startup import ROOT, start_with

OIDC = {
    "LOGIN_METHOD": "oidc",
    "OIDC_RP_CLIENT_ID": "storagelab",
    "OIDC_OP_AUTHORIZATION_ENDPOINT": "https://idp.example.org/auth",
    "OIDC_OP_TOKEN_ENDPOINT": "https://idp.example.org/token",
    "OIDC_OP_USER_ENDPOINT": "https://idp.example.org/userinfo",
    "OIDC_OP_JWKS_ENDPOINT": "https://idp.example.org/certs",
}


def settings_with(names: str, **env: str) -> str:
    """The values of some settings, as a fresh process with `env` reads them."""
    code = f"from portal import settings as s; [print(getattr(s, n)) for n in {names.split()!r}]"
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**os.environ, "SECRET_KEY": "settings-test", **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout


def test_an_unknown_login_method_is_refused() -> None:
    refused = start_with(LOGIN_METHOD="ldap")
    assert refused.returncode != 0
    assert "LOGIN_METHOD must be local, oidc or remote_user, not 'ldap'" in refused.stderr


def test_oidc_without_its_client_id_or_an_endpoint_is_refused_naming_them() -> None:
    refused = start_with(**{**OIDC, "OIDC_RP_CLIENT_ID": "", "OIDC_OP_JWKS_ENDPOINT": ""})

    assert refused.returncode != 0
    assert "LOGIN_METHOD=oidc needs OIDC_RP_CLIENT_ID, OIDC_OP_JWKS_ENDPOINT;" in refused.stderr
    assert "manage.py oidc_endpoints" in refused.stderr
    assert start_with(**OIDC).returncode == 0


def test_oidc_signing_with_the_client_secret_needs_the_secret() -> None:
    hs256 = {**OIDC, "OIDC_RP_SIGN_ALGO": "HS256", "OIDC_OP_JWKS_ENDPOINT": ""}

    refused = start_with(**hs256)
    assert refused.returncode != 0 and "needs OIDC_RP_CLIENT_SECRET" in refused.stderr
    assert start_with(**hs256, OIDC_RP_CLIENT_SECRET="s3cret").returncode == 0
    assert (
        "must be an RS*, ES* or HS* algorithm"
        in start_with(**OIDC, OIDC_RP_SIGN_ALGO="none").stderr
    )


def test_oidc_installs_its_backend_and_reads_the_secret_from_a_file(tmp_path) -> None:
    secret = tmp_path / "client-secret"
    secret.write_text("from-a-file\n")

    values = settings_with(
        "AUTHENTICATION_BACKENDS OIDC_RP_CLIENT_SECRET OIDC_INSTRUCTOR_GROUPS MIDDLEWARE",
        **OIDC,
        OIDC_RP_CLIENT_SECRET_FILE=str(secret),
        OIDC_INSTRUCTOR_GROUPS="hpc-teachers, /staff/instructors",
    ).splitlines()

    assert values[0] == str(
        [
            "axes.backends.AxesStandaloneBackend",
            "django.contrib.auth.backends.ModelBackend",
            "portal.oidc.OIDCBackend",
        ]
    )
    assert values[1] == "from-a-file"
    assert values[2] == str(["hpc-teachers", "/staff/instructors"])
    assert "RemoteUser" not in values[3]


def test_remote_user_installs_its_middleware_after_django_s_authentication() -> None:
    backends, middleware = settings_with(
        "AUTHENTICATION_BACKENDS MIDDLEWARE", LOGIN_METHOD="remote_user"
    ).splitlines()

    assert backends.endswith("'portal.remote_user.RemoteUserBackend']")
    assert (
        "'django.contrib.auth.middleware.AuthenticationMiddleware', "
        "'portal.remote_user.RemoteUserMiddleware'"
    ) in middleware


def test_a_remote_user_header_must_be_a_wsgi_variable() -> None:
    refused = start_with(LOGIN_METHOD="remote_user", REMOTE_USER_HEADER="X-Remote-User")

    assert refused.returncode != 0
    assert "HTTP_X_REMOTE_USER for a header X-Remote-User" in refused.stderr
    unguarded = start_with(LOGIN_METHOD="remote_user", REMOTE_USER_HEADER="HTTP_X_REMOTE_USER")
    assert unguarded.returncode != 0
    assert "a header anyone can send" in unguarded.stderr
    guarded = start_with(
        LOGIN_METHOD="remote_user",
        REMOTE_USER_HEADER="HTTP_X_REMOTE_USER",
        REMOTE_USER_PROXIES="10.1.2.3, 192.168.0.0/24",
    )
    assert guarded.returncode == 0, guarded.stderr


def test_stripping_any_realm_is_refused_with_what_to_set_instead() -> None:
    refused = start_with(LOGIN_METHOD="remote_user", REMOTE_USER_STRIP_REALM="true")
    assert refused.returncode != 0 and "REMOTE_USER_REALMS" in refused.stderr
    bad = start_with(LOGIN_METHOD="remote_user", REMOTE_USER_PROXIES="10.1.2.300")
    assert bad.returncode != 0 and "REMOTE_USER_PROXIES" in bad.stderr


def test_local_logins_install_nothing_more() -> None:
    backends, middleware = settings_with("AUTHENTICATION_BACKENDS MIDDLEWARE").splitlines()

    assert "oidc" not in backends and "RemoteUser" not in backends + middleware
