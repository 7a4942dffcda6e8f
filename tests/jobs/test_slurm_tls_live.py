"""slurmrestd over https, its certificate signed by the site's own CA: the portal
trusts it through SLURMRESTD_CA_BUNDLE, and says what to set when it does not.

slurmrestd 22.05 serves plain HTTP (sites put TLS in front of it); here a TLS
terminator on loopback, with a certificate from a CA made for the test, stands in
front of the dev cluster's slurmrestd."""

import select
import socket
import ssl
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.conf import settings

from jobs.slurm import SlurmClient, SlurmError, get_client
from jobs.slurm.client import ca_bundle


def openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


@pytest.fixture
def site_ca(tmp_path: Path) -> Path:
    """A CA and, signed by it, a certificate for 127.0.0.1. Returns the folder."""
    ca = "-subj", "/CN=Test site CA", "-keyout", "ca.key", "-out", "ca.pem"
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", *ca, cwd=tmp_path)
    csr = "-subj", "/CN=slurmrestd", "-keyout", "server.key", "-out", "server.csr"
    openssl("req", "-newkey", "rsa:2048", "-nodes", *csr, cwd=tmp_path)
    (tmp_path / "san.ext").write_text("subjectAltName=IP:127.0.0.1\n")
    signed = "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-extfile", "san.ext"
    openssl("x509", "-req", "-in", "server.csr", *signed, "-out", "server.pem", cwd=tmp_path)
    return tmp_path


@pytest.fixture
def https_slurmrestd(site_ca: Path) -> Iterator[str]:
    """https://127.0.0.1:PORT, forwarding to the dev cluster's slurmrestd."""
    upstream = urlsplit(settings.SLURMRESTD_URL)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(site_ca / "server.pem", site_ca / "server.key")
    listener = socket.create_server(("127.0.0.1", 0))

    def relay(tls: ssl.SSLSocket, server: socket.socket) -> None:
        # Both directions in one thread: an SSL socket must not be read in one thread
        # while written in another (under load that broke the handshake's records).
        with tls, server:
            while True:
                ready = [tls] if tls.pending() else select.select([tls, server], [], [], 30)[0]
                if not ready:
                    return
                for src in ready:
                    try:
                        chunk = src.recv(65536)
                    except ssl.SSLWantReadError:
                        continue  # a record not whole yet
                    except OSError:
                        return
                    if not chunk:
                        return
                    (server if src is tls else tls).sendall(chunk)

    def serve(client: socket.socket) -> None:
        try:
            tls = context.wrap_socket(client, server_side=True)
        except (ssl.SSLError, OSError):
            client.close()  # a client that did not trust us
            return
        relay(tls, socket.create_connection((upstream.hostname, upstream.port), timeout=30))

    def accept() -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(client,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    yield f"https://127.0.0.1:{listener.getsockname()[1]}"
    listener.close()


def client_for(url: str, verify: ssl.SSLContext | bool) -> SlurmClient:
    portal = get_client()  # the portal's own token signer
    return SlurmClient(
        url, portal.auth, service_user=portal.service_user, timeout=10, verify=verify
    )


def test_slurmrestd_behind_tls_is_trusted_with_the_sites_ca_bundle(
    https_slurmrestd: str, site_ca: Path
) -> None:
    trusted = client_for(https_slurmrestd, verify=ca_bundle(str(site_ca / "ca.pem")))

    ping = trusted.ping()
    assert ping.up and ping.api_version == get_client().api_version()


def test_an_untrusted_certificate_says_which_setting_to_set(https_slurmrestd: str) -> None:
    untrusted = client_for(https_slurmrestd, verify=True)  # the public CAs only

    with pytest.raises(SlurmError, match="not trusted; set SLURMRESTD_CA_BUNDLE"):
        untrusted.ping()
