"""Guessing a password from many addresses: a client cannot name its own address."""

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

PROXY = "10.0.0.2"  # the site's TLS proxy, on its private network


def log_in(client: Client, username: str, password: str):
    return client.post("/login/", {"username": username, "password": password})


def through_the_proxy(client_address: str) -> Client:
    """A browser at `client_address`, its requests relayed by the site's proxy."""
    return Client(REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR=client_address)


def checked(response) -> bool:
    """The password was checked (and found wrong), not refused before."""
    return response.status_code == 200 and "did not match" in response.content.decode()


# --- The address counted: a client cannot choose it -----------------------------------


@pytest.mark.parametrize("proxies", [0, 1])
def test_a_client_reaching_the_portal_directly_cannot_name_its_address(
    make_user, settings, proxies: int
) -> None:
    """With no proxy configured, or with one but reached past it, X-Forwarded-For is
    what the client wrote: it is not the address counted."""
    settings.TRUSTED_PROXY_COUNT = proxies
    admin = make_user(password="Admin-pass-1", superuser=True)
    answers = []
    for i in range(5):
        forged = Client(REMOTE_ADDR="198.51.100.7", HTTP_X_FORWARDED_FOR=f"203.0.113.{i}")
        answers.append(log_in(forged, admin.username, "guess"))
    assert all(checked(a) for a in answers[:4]) and answers[4].status_code == 429

    forged = Client(REMOTE_ADDR="198.51.100.7", HTTP_X_FORWARDED_FOR="203.0.113.99")
    paused = log_in(forged, admin.username, "Admin-pass-1")
    assert paused.status_code == 429 and "paused for 15 minutes" in paused.content.decode()


def test_an_ipv6_client_is_counted_by_its_64(make_user, settings) -> None:
    """One machine may hold a whole /64: its addresses count as one."""
    settings.TRUSTED_PROXY_COUNT = 1
    ada = make_user(password="Ada-pass-1")
    for i in range(5):
        log_in(through_the_proxy(f"2001:db8:1:2::{i + 1:x}"), ada.username, "guess")

    paused = log_in(through_the_proxy("2001:db8:1:2:ffff::1"), ada.username, "Ada-pass-1")
    assert paused.status_code == 429 and "paused for 15 minutes" in paused.content.decode()
    another_network = through_the_proxy("2001:db8:1:3::1")
    assert log_in(another_network, ada.username, "Ada-pass-1").status_code == 302


def test_behind_two_proxies_only_trusted_ones_name_the_next(make_user, settings) -> None:
    """The inner proxy appends who reached it: when that is no proxy of the site (a
    client past the outer one), it is the client, whatever it wrote before."""
    settings.TRUSTED_PROXY_COUNT = 2
    ada = make_user(password="Ada-pass-1")
    for i in range(5):
        past_the_outer = Client(
            REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR=f"203.0.113.{i}, 198.51.100.7"
        )
        log_in(past_the_outer, ada.username, "guess")

    same_client = Client(REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR="203.0.113.99, 198.51.100.7")
    assert log_in(same_client, ada.username, "Ada-pass-1").status_code == 429
    through_both = Client(REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR="203.0.113.99, 10.0.0.3")
    assert log_in(through_both, ada.username, "Ada-pass-1").status_code == 302
