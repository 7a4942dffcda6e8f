"""The login throttle's second rule: tries for one user name, from anywhere.

django-axes counts wrong passwords per user name and address: LOGIN_FAILURE_LIMIT of
them pause that pair for LOGIN_LOCKOUT_MINUTES, so that a classroom behind one
address is not paused for one trainee's typos. Alone, that lets a botnet, or one
machine with many addresses, guess a user's password without limit, a few tries
from each address. Axes can count per user name too, but only with the pair's limit
and pause: anyone could then lock any user out for 15 minutes with five wrong
passwords. So this handler (AXES_HANDLER) keeps axes' rule and adds one of its own:

- The first LOGIN_USER_FAILURE_LIMIT tries for a user name come freely. After them,
  each try takes a turn: it may come 1 s after the try before, then 2 s, 4 s, ...,
  at most LOGIN_USER_MAX_WAIT_SECONDS. One try per turn, however many arrive at
  once: asking in parallel gets a botnet nothing more. A refused try is not counted
  and does not push the next turn back; a right password is not counted either.
- Tries are forgotten FORGET_AFTER_SECONDS after the last one.
- From an address the user logged in from in the last USUAL_ADDRESS_DAYS (axes'
  access log), nobody waits: the real user gets in during an attack, from where
  they usually work, where the pair's rule still holds. Elsewhere they wait one
  turn at most.
- A user name that does not exist is counted alike: the wait tells nobody which do.

The counts live in the cache (Redis), which forgets them by itself. Without Redis
the rule stands aside (the pair's rule, in the database, still holds): a break-glass
admin must be able to log in while Redis is down.
"""

import contextlib
import hashlib
import logging
import math
import time
from datetime import timedelta

from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username
from axes.models import AccessLog
from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest
from django.utils import timezone
from redis.exceptions import RedisError

log = logging.getLogger(__name__)

FORGET_AFTER_SECONDS = 3600
USUAL_ADDRESS_DAYS = 90


def wait_after(tries: int) -> int:
    """Seconds from the `tries`-th try for a user name to the next one's turn."""
    beyond = tries - settings.LOGIN_USER_FAILURE_LIMIT
    if beyond < 0:
        return 0
    return min(2 ** min(beyond, 30), settings.LOGIN_USER_MAX_WAIT_SECONDS)


class LoginThrottle(AxesDatabaseHandler):
    """axes' database handler (the pair's rule), and the user name's turns."""

    def is_locked(self, request: HttpRequest, credentials: dict | None = None) -> bool:
        if super().is_locked(request, credentials):
            return True
        username = get_client_username(request, credentials)
        if not username or hasattr(request, "login_try_key"):
            return False  # no name to count, or this request's try is counted already
        try:
            return not _take_turn(request, username)
        except RedisError as e:
            log.warning("login throttle per user name skipped, no cache: %s", e)
            return False

    def user_login_failed(self, sender, credentials: dict, request=None, **kwargs) -> None:
        if request is not None and getattr(request, "login_wait_seconds", None):
            # Refused before its password was checked: no failure to record, and the
            # lockout page (AxesMiddleware) says how long to wait.
            request.axes_locked_out = True
            request.axes_credentials = credentials
            return
        super().user_login_failed(sender, credentials, request, **kwargs)

    def user_logged_in(self, sender, request, user, **kwargs) -> None:
        super().user_logged_in(sender, request, user, **kwargs)
        key = getattr(request, "login_try_key", None)
        if key:  # the right password: no failure to count
            try:
                _uncount(key)
            except RedisError as e:
                log.warning("login throttle per user name skipped, no cache: %s", e)

    def reset_attempts(self, *, ip_address=None, username=None, ip_or_username=False) -> int:
        """`manage.py axes_reset_username NAME` also forgets the name's tries."""
        if username:
            try:
                cache.delete_many([_tries_key(username), _turn_key(username)])
            except RedisError as e:
                log.warning("cannot forget the tries for a user name, no cache: %s", e)
        return super().reset_attempts(
            ip_address=ip_address, username=username, ip_or_username=ip_or_username
        )


def _take_turn(request: HttpRequest, username: str) -> bool:
    """Counts this try for `username`, if it may come now; else says how long it waits
    (request.login_wait_seconds, read by portal.views.locked_out)."""
    key = _tries_key(username)
    cache.add(key, 0, FORGET_AFTER_SECONDS)
    try:
        tries = cache.incr(key)
    except ValueError:  # forgotten between the two calls
        tries = 1
        cache.set(key, tries, FORGET_AFTER_SECONDS)
    cache.touch(key, FORGET_AFTER_SECONDS)
    if tries >= settings.LOGIN_USER_FAILURE_LIMIT:
        if _usual_address(username, request.axes_ip_address):
            _uncount(key)
            return True
        wait = wait_after(tries)
        turn = _turn_key(username)
        if not cache.add(turn, time.time() + wait, wait):
            _uncount(key)
            opens = cache.get(turn) or time.time() + 1
            request.login_wait_seconds = max(1, math.ceil(opens - time.time()))
            return False
        log.warning("login: try %d for one user name; the next waits %d s", tries, wait)
    request.login_try_key = key
    return True


def _uncount(key: str) -> None:
    with contextlib.suppress(ValueError):  # forgotten already
        cache.decr(key)


def _usual_address(username: str, address: str | None) -> bool:
    since = timezone.now() - timedelta(days=USUAL_ADDRESS_DAYS)
    logins = AccessLog.objects.filter(username=username, ip_address=address)
    return bool(address) and logins.filter(attempt_time__gte=since).exists()


def _tries_key(username: str) -> str:
    return f"login-tries:{hashlib.sha256(username.encode()).hexdigest()}"


def _turn_key(username: str) -> str:
    return f"login-turn:{hashlib.sha256(username.encode()).hexdigest()}"
