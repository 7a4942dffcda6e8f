"""Guessing a password from many addresses: the throttle counts per user name as well
as per user name and address (portal/lockouts.py), a client cannot name its own
address, and the real user is kept out for a short while at most."""

import ipaddress
import math
import threading
import time

import pytest
from django.core.management import call_command
from django.test import Client

from portal.lockouts import wait_after
from tests.names import unique_name

pytestmark = pytest.mark.django_db

PROXY = "10.0.0.2"  # the site's TLS proxy, on its private network


@pytest.fixture(autouse=True)
def the_sites_proxies(settings) -> None:
    """The site names where its proxies reach the portal from; unnamed, only this
    machine's would be believed."""
    settings.TRUSTED_PROXIES = [ipaddress.ip_network("10.0.0.0/29")]
    settings.TRUSTED_PROXIES_NAMED = True


def log_in(client: Client, username: str, password: str):
    return client.post("/login/", {"username": username, "password": password})


def through_the_proxy(client_address: str) -> Client:
    """A browser at `client_address`, its requests relayed by the site's proxy."""
    return Client(REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR=client_address)


def checked(response) -> bool:
    """The password was checked (and found wrong), not refused before."""
    return response.status_code == 200 and "did not match" in response.content.decode()


def turns_in(seconds: float) -> int:
    """How many turns can open within `seconds` of the tenth try: 1 s, then 2, 4, ..."""
    return 1 + int(math.log2(seconds + 1))


def guess_from_many_addresses(username: str, count: int) -> list:
    return [
        log_in(through_the_proxy(f"203.0.113.{i}"), username, f"guess-{i}") for i in range(count)
    ]


def take_the_next_turn(username: str) -> None:
    """The attacker waits for the next turn and spends it on a wrong password."""
    for i in range(100):
        if checked(log_in(through_the_proxy(f"198.18.0.{i}"), username, "guess")):
            return
        time.sleep(0.1)
    raise AssertionError("no turn came in 10 s")


def test_thirty_addresses_get_ten_guesses_then_one_at_a_time(make_user, settings) -> None:
    settings.TRUSTED_PROXY_COUNT = 1
    admin = make_user(password="Admin-pass-1", superuser=True)

    started = time.monotonic()
    answers = guess_from_many_addresses(admin.username, 30)
    elapsed = time.monotonic() - started

    assert all(checked(a) for a in answers[:10])
    guesses = sum(checked(a) for a in answers)
    assert guesses <= 10 + turns_in(elapsed), f"{guesses} guesses in {elapsed:.1f} s"
    # On a slow host a turn may open just as the thirtieth try comes: every try that was
    # not checked is refused with the wait said, not only the last one.
    refused = [a for a in answers if not checked(a)]
    assert len(refused) == 30 - guesses
    for answer in refused:
        assert answer.status_code == 429
        assert "it takes one try at a time: try again in" in answer.content.decode()
        assert 1 <= int(answer["Retry-After"]) <= 300


def test_a_name_nobody_has_is_counted_alike(make_user, settings) -> None:
    """The wait tells an attacker nothing about which user names exist."""
    settings.TRUSTED_PROXY_COUNT = 1

    answers = guess_from_many_addresses(unique_name("nobody"), 12)

    assert answers[-1].status_code == 429 and "try again in" in answers[-1].content.decode()


# Its threads have database connections of their own, which commit what they write (the
# failures axes records): the database is emptied after it, so no later test sees them.
@pytest.mark.django_db(transaction=True)
def test_tries_sent_at_once_get_one_turn_between_them(
    make_user, settings, django_db_blocker
) -> None:
    """A botnet asking in parallel gets no more guesses than one asking in turn."""
    settings.TRUSTED_PROXY_COUNT = 1
    admin = make_user(password="Admin-pass-1", superuser=True)
    start = threading.Barrier(40)
    answers = []

    def guess(i: int) -> None:
        from django.db import connection

        with django_db_blocker.unblock():
            start.wait()
            answers.append(log_in(through_the_proxy(f"203.0.113.{i}"), admin.username, "guess"))
            connection.close()

    threads = [threading.Thread(target=guess, args=(i,)) for i in range(40)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started

    guesses = sum(checked(a) for a in answers)
    assert guesses <= 10 + turns_in(elapsed), f"{guesses} guesses in {elapsed:.1f} s"
    assert sum(a.status_code == 429 for a in answers) >= 40 - guesses


def test_the_real_admin_gets_in_after_a_short_wait(make_user, settings) -> None:
    settings.TRUSTED_PROXY_COUNT = 1
    settings.LOGIN_USER_MAX_WAIT_SECONDS = 3  # the site's 300, shortened for the test
    admin = make_user(password="Admin-pass-1", superuser=True)
    guess_from_many_addresses(admin.username, 12)
    take_the_next_turn(admin.username)

    # The admin, from a place the portal has not seen them at, waits one turn, then is in.
    laptop = through_the_proxy("192.0.2.77")
    waiting = log_in(laptop, admin.username, "Admin-pass-1")
    assert waiting.status_code == 429
    wait = int(waiting["Retry-After"])
    assert 1 <= wait <= 3
    assert f"try again in {wait} second" in waiting.content.decode()

    time.sleep(wait)
    assert log_in(laptop, admin.username, "Admin-pass-1").status_code == 302


def test_the_real_admin_at_their_usual_address_does_not_wait(make_user, settings) -> None:
    settings.TRUSTED_PROXY_COUNT = 1
    admin = make_user(password="Admin-pass-1", superuser=True)
    office = through_the_proxy("192.0.2.10")
    assert log_in(office, admin.username, "Admin-pass-1").status_code == 302
    office.post("/logout/")

    guess_from_many_addresses(admin.username, 12)
    take_the_next_turn(admin.username)

    assert log_in(office, admin.username, "Admin-pass-1").status_code == 302


def test_one_addresses_pause_keeps_nobody_out_elsewhere(make_user, settings) -> None:
    """Five wrong passwords pause that address for 15 minutes, not the user: from
    another computer she logs in at once."""
    settings.TRUSTED_PROXY_COUNT = 1
    ada = make_user(password="Ada-pass-1")
    shared_pc = through_the_proxy("198.51.100.1")
    for _ in range(5):
        log_in(shared_pc, ada.username, "guess")
    paused = log_in(shared_pc, ada.username, "Ada-pass-1")
    assert paused.status_code == 429 and "paused for 15 minutes" in paused.content.decode()

    assert log_in(through_the_proxy("198.51.100.2"), ada.username, "Ada-pass-1").status_code == 302


def test_a_right_password_does_not_count_as_a_try(make_user, settings) -> None:
    """A class logs in many times a day: only wrong passwords bring the wait closer."""
    settings.TRUSTED_PROXY_COUNT = 1
    ada = make_user(password="Ada-pass-1")
    for i in range(15):
        pc = through_the_proxy(f"198.51.100.{i}")
        assert log_in(pc, ada.username, "Ada-pass-1").status_code == 302


def test_staff_can_let_a_user_name_in_again(make_user, settings) -> None:
    """`manage.py axes_reset_username` forgets the name's tries too."""
    settings.TRUSTED_PROXY_COUNT = 1
    admin = make_user(password="Admin-pass-1", superuser=True)
    guess_from_many_addresses(admin.username, 12)
    take_the_next_turn(admin.username)

    call_command("axes_reset_username", admin.username)

    laptop = through_the_proxy("192.0.2.77")
    assert log_in(laptop, admin.username, "Admin-pass-1").status_code == 302


def test_without_redis_an_admin_still_logs_in(make_user, settings) -> None:
    """Break glass while Redis is down: the per-name rule stands aside, the pair's
    rule (in the database) still holds."""
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:9/0",  # nothing listens there
        }
    }
    admin = make_user(password="Admin-pass-1", superuser=True)
    for _ in range(5):
        log_in(Client(), admin.username, "guess")
    assert log_in(Client(), admin.username, "Admin-pass-1").status_code == 429

    laptop = Client(REMOTE_ADDR="192.0.2.77")
    assert log_in(laptop, admin.username, "Admin-pass-1").status_code == 302


def test_the_waits_double_from_one_second_up_to_five_minutes() -> None:
    """The site's numbers: ten free tries, then 1 s, 2 s, 4 s, ... at most 300 s
    between two; the real user, anywhere, waits five minutes at most."""
    assert [wait_after(n) for n in range(9, 21)] == [0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300]

    def guesses_within(seconds: int) -> int:
        """Tries a patient attacker gets, each at the opening of its turn."""
        tries, clock = 0, 0
        while clock <= seconds:
            tries += 1
            clock += wait_after(tries)
        return tries

    # A botnet of a thousand addresses got 5 every 15 minutes from each, 480,000 a day.
    assert [guesses_within(s) for s in (60, 3600, 86400)] == [15, 29, 305]


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


def test_behind_a_proxy_on_a_unix_socket_the_client_is_the_one_it_names(
    make_user, settings
) -> None:
    """gunicorn gives a Unix socket's peer no address: only this machine reaches it."""
    settings.TRUSTED_PROXY_COUNT = 1
    ada = make_user(password="Ada-pass-1")
    for _ in range(5):
        log_in(Client(REMOTE_ADDR="", HTTP_X_FORWARDED_FOR="203.0.113.1"), ada.username, "guess")

    other_pc = Client(REMOTE_ADDR="", HTTP_X_FORWARDED_FOR="203.0.113.2")
    assert log_in(other_pc, ada.username, "Ada-pass-1").status_code == 302
