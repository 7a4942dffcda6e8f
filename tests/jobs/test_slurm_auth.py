"""Tokens for slurmrestd: what the portal signs, how long it keeps them, and that
they never reach a log record or an error message."""

import logging
import secrets
import socket
import traceback
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import jwt
import pytest

from jobs.slurm import SlurmAuthError, SlurmClient, SlurmError, auth
from jobs.slurm.auth import RENEW_BEFORE, StaticToken, TokenSigner
from tests.jobs.recorded import find, mock_client

NOW = 1_762_942_000.0


@pytest.fixture
def key_file(tmp_path: Path) -> Path:
    path = tmp_path / "jwt_hs256.key"
    path.write_bytes(secrets.token_bytes(32))
    return path


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The time TokenSigner sees; move it with clock[0] += seconds."""
    now = [NOW]
    monkeypatch.setattr(auth, "time", SimpleNamespace(time=lambda: now[0]))
    return now


def claims(token: str, key_file: Path) -> dict[str, Any]:
    return jwt.decode(
        token, key_file.read_bytes(), algorithms=["HS256"], options={"verify_exp": False}
    )


def test_it_signs_an_hs256_token_for_the_user_that_the_cluster_key_verifies(
    key_file: Path,
) -> None:
    token = TokenSigner(str(key_file), 600).token("alice")

    assert jwt.get_unverified_header(token)["alg"] == "HS256"
    verified = jwt.decode(token, key_file.read_bytes(), algorithms=["HS256"])
    assert verified["sun"] == "alice"
    assert verified["exp"] - verified["iat"] == 600
    with pytest.raises(jwt.InvalidSignatureError):
        jwt.decode(token, secrets.token_bytes(32), algorithms=["HS256"])


def test_each_user_gets_a_token_of_their_own(key_file: Path) -> None:
    signer = TokenSigner(str(key_file), 600)

    assert signer.headers("alice") == {
        "X-SLURM-USER-NAME": "alice",
        "X-SLURM-USER-TOKEN": signer.token("alice"),
    }
    assert claims(signer.token("bob"), key_file)["sun"] == "bob"


def test_a_token_is_reused_until_a_minute_before_it_expires(
    key_file: Path, clock: list[float]
) -> None:
    signer = TokenSigner(str(key_file), 600)
    first = signer.token("alice")

    clock[0] += 600 - RENEW_BEFORE - 1
    assert signer.token("alice") == first

    clock[0] += 1
    renewed = signer.token("alice")
    assert renewed != first
    assert claims(renewed, key_file)["exp"] == int(clock[0]) + 600


def test_a_lifespan_shorter_than_the_renewal_margin_is_lengthened(
    key_file: Path, clock: list[float]
) -> None:
    token = TokenSigner(str(key_file), 10).token("alice")

    signed = claims(token, key_file)
    assert signed["exp"] - signed["iat"] == 2 * RENEW_BEFORE


def test_a_missing_key_file_names_the_path_and_no_token(key_file: Path, clock: list[float]) -> None:
    signer = TokenSigner(str(key_file), 600)
    old = signer.token("alice")
    key_file.unlink()
    clock[0] += 600

    with pytest.raises(SlurmAuthError) as caught:
        signer.headers("alice")

    assert str(key_file) in str(caught.value)
    assert old not in str(caught.value)
    assert caught.value.permanent


def test_a_static_token_names_the_user_it_acts_for() -> None:
    assert StaticToken("service-token").headers("alice") == {
        "X-SLURM-USER-NAME": "alice",
        "X-SLURM-USER-TOKEN": "service-token",
    }


# --- tokens stay out of logs and errors ---------------------------------------------------

Answer = Callable[[httpx.Request], httpx.Response]


def echoing(status: int, content_type: str) -> Answer:
    """A server (or a proxy in front of it) that repeats the token it was sent."""
    return lambda request: httpx.Response(
        status,
        text=f"Refused {request.headers['x-slurm-user-token']}",
        headers={"content-type": content_type},
    )


def token_in_errors(request: httpx.Request) -> httpx.Response:
    token = request.headers["x-slurm-user-token"]
    error = {"description": f"bad token {token}", "error_number": 1007, "error": "Protocol"}
    return httpx.Response(511, json={"errors": [error], "warnings": []})


@pytest.mark.parametrize(
    "answer",
    [
        lambda request: find("25.11-v0.0.44").response("slurm-jwt-invalid-token"),
        lambda request: find("24.05-v0.0.41").response("slurm-jwt-invalid-token"),
        lambda request: find("25.11-v0.0.44").response("slurm-jwt-missing-headers"),
        lambda request: find("24.11-v0.0.42").response("slurm-job-unfound"),
        echoing(401, "text/plain"),
        echoing(500, "text/plain"),
        echoing(502, "text/html"),
        token_in_errors,
    ],
    ids=[
        "token-refused",
        "unspecified-error",
        "25.11-auth-500",
        "not-found",
        "401-echoing-the-token",
        "500-echoing-the-token",
        "proxy-echoing-the-token",
        "token-in-errors",
    ],
)
def test_no_token_reaches_a_log_or_an_error_message(
    answer: Answer, key_file: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    for name in ("httpx", "httpcore", "jobs.slurm"):
        caplog.set_level(logging.DEBUG, logger=name)
    signer = TokenSigner(str(key_file), 600)
    token = signer.token("alice")

    def slurmrestd(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/slurm/v0.0.44/ping":
            return find("25.11-v0.0.44").response("slurm-ping")
        if not request.url.path.startswith("/slurm/v0.0.44/"):  # 25.11 serves no newer
            return find("25.11-v0.0.44").response("slurm-not-found")
        return answer(request)

    client = mock_client(slurmrestd, signer, user="alice")
    with pytest.raises(SlurmError) as caught:
        client.job("alice", 5739)

    assert "HTTP Request: GET http://slurmrestd.test/slurm/v0.0.44/job/5739" in caplog.text
    assert token not in caplog.text
    assert token not in "".join(traceback.format_exception(caught.value))
    assert all(token not in str(error) for error in caught.value.errors)


def test_no_token_reaches_a_log_when_slurmrestd_echoes_it_in_a_warning(
    key_file: Path, caplog: pytest.LogCaptureFixture
) -> None:
    rec = find("25.11-v0.0.44")

    def slurmrestd(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/ping"):
            return rec.response("slurm-ping")
        warning = {"description": f"seen {request.headers['x-slurm-user-token']}"}
        return httpx.Response(200, json=dict(rec.body("slurm-jobs"), warnings=[warning]))

    signer = TokenSigner(str(key_file), 600)
    client = mock_client(slurmrestd, signer, user="alice")
    with caplog.at_level(logging.DEBUG):
        assert client.jobs("alice")

    assert "seen [token]" in caplog.text
    assert signer.token("alice") not in caplog.text


def test_no_token_reaches_the_transport_logs_when_slurmrestd_is_unreachable(
    key_file: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    caplog.set_level(logging.DEBUG)
    for name in ("httpx", "httpcore"):
        caplog.set_level(logging.DEBUG, logger=name)
    signer = TokenSigner(str(key_file), 600)
    client = SlurmClient(f"http://127.0.0.1:{port}", signer, service_user="alice", timeout=2)

    with pytest.raises(SlurmError) as caught:
        client.ping()

    assert "connect_tcp" in caplog.text
    token = signer.token("alice")
    assert token not in caplog.text
    assert token not in "".join(traceback.format_exception(caught.value))
