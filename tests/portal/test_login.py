"""Logging in on shared classroom PCs: failed attempts are throttled per user name
and address, and a session lasts a working day."""

import ipaddress

import pytest
from django.contrib.auth.hashers import make_password
from django.test import Client

pytestmark = pytest.mark.django_db


def log_in(client: Client, username: str, password: str):
    return client.post("/login/", {"username": username, "password": password})


def test_the_fifth_wrong_password_pauses_the_user_name_with_a_clear_page(
    client: Client, make_user
) -> None:
    ada, bob = make_user(password="Ada-pass-1"), make_user(password="Bob-pass-1")
    for _ in range(4):
        assert "did not match" in log_in(client, ada.username, "guess").content.decode()
    fifth = log_in(client, ada.username, "guess")
    assert fifth.status_code == 429 and "wrong 5 times" in fifth.content.decode()

    paused = log_in(client, ada.username, "Ada-pass-1")  # even the right password

    assert paused.status_code == 429
    assert "paused for 15 minutes" in paused.content.decode()
    assert "_auth_user_id" not in client.session
    # A classmate on the same PC (same address) still logs in.
    assert log_in(client, bob.username, "Bob-pass-1").status_code == 302


def test_a_good_login_clears_earlier_failures(client: Client, make_user) -> None:
    ada = make_user(password="Ada-pass-1")
    for _ in range(4):
        log_in(client, ada.username, "guess")
    assert log_in(client, ada.username, "Ada-pass-1").status_code == 302
    client.logout()

    for _ in range(4):
        log_in(client, ada.username, "guess")
    assert log_in(client, ada.username, "Ada-pass-1").status_code == 302


def test_a_session_lasts_a_working_day(client: Client, make_user) -> None:
    ada = make_user(password="Ada-pass-1")

    response = log_in(client, ada.username, "Ada-pass-1")

    assert response.cookies["sessionid"]["max-age"] == 9 * 3600


def test_passwords_are_stored_with_argon2id_and_older_hashes_still_log_in(
    client: Client, make_user, settings
) -> None:
    """A class logs in at once at a course's start: each check costs ~20 ms, not
    PBKDF2's ~230 ms. A password stored before (PBKDF2) logs in and is rehashed."""
    from portal import settings as site_settings

    settings.PASSWORD_HASHERS = site_settings.PASSWORD_HASHERS  # not the tests' MD5
    ada = make_user(password="Ada-pass-1")
    ada.refresh_from_db()
    assert ada.password.startswith("argon2$argon2id$v=19$m=19456,t=2,p=1$")

    bob = make_user(password="unused")
    bob.password = make_password("Bob-pass-1", hasher="pbkdf2_sha256")
    bob.save(update_fields=["password"])

    assert log_in(client, bob.username, "Bob-pass-1").status_code == 302
    bob.refresh_from_db()
    assert bob.password.startswith("argon2$argon2id$")
    assert log_in(Client(), bob.username, "wrong-pass").status_code == 200


def from_(proxy: str, client_address: str) -> Client:
    """A browser at `client_address`, its requests relayed by the site's proxy."""
    return Client(REMOTE_ADDR=proxy, HTTP_X_FORWARDED_FOR=client_address)


@pytest.fixture
def proxy_named(settings) -> None:
    """The site names its TLS proxy's address; unnamed, only this machine's is believed."""
    settings.TRUSTED_PROXIES = [ipaddress.ip_network("10.0.0.2")]
    settings.TRUSTED_PROXIES_NAMED = True


def test_behind_the_sites_proxy_the_throttle_counts_the_clients_address(
    make_user, settings, proxy_named
) -> None:
    settings.TRUSTED_PROXY_COUNT = 1
    ada = make_user(password="Ada-pass-1")
    pc = from_("10.0.0.2", "198.51.100.1")
    for _ in range(5):
        log_in(pc, ada.username, "guess")
    assert log_in(pc, ada.username, "Ada-pass-1").status_code == 429

    # Ada at another PC, through the same proxy, is not paused with the first PC.
    assert log_in(from_("10.0.0.2", "198.51.100.2"), ada.username, "Ada-pass-1").status_code == 302


@pytest.mark.parametrize(("proxies", "real"), [(0, ""), (1, ", 198.51.100.9")])
def test_a_client_cannot_spoof_its_address_past_the_proxies(
    make_user, settings, proxy_named, proxies: int, real: str
) -> None:
    """Without a proxy the header is the client's own; behind one, only the address the
    proxy appended counts, not what the client wrote before it."""
    settings.TRUSTED_PROXY_COUNT = proxies
    ada = make_user(password="Ada-pass-1")
    for guess in range(5):
        log_in(from_("10.0.0.2", f"203.0.113.{guess}{real}"), ada.username, "guess")

    spoofed = from_("10.0.0.2", f"203.0.113.99{real}")
    assert log_in(spoofed, ada.username, "Ada-pass-1").status_code == 429
