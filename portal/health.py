"""The checks behind /healthz: each says ok or not, and what it saw. The portal checks
its database and Redis; an app adds what it depends on with `register` in its ready()
(jobs: slurmrestd), so the portal imports no app."""

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from django.conf import settings
from django.core.cache import cache
from django.db import connection


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    facts: dict[str, str] = field(default_factory=dict)


def check_database() -> Check:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT version()")
            (version,) = cursor.fetchone()
    except Exception as e:  # any driver error means "down" here
        return Check("Database", False, f"unreachable: {type(e).__name__}")
    return Check("Database", True, "reachable", {"server": version.split(" on ")[0]})


def check_redis() -> Check:
    try:
        cache.set("healthz", "ok", timeout=10)
        ok = cache.get("healthz") == "ok"
    except Exception as e:  # connection refused, timeout, ...
        return Check("Redis", False, f"unreachable: {type(e).__name__}")
    return Check("Redis", ok, "reachable" if ok else "answered, but lost a value")


_registered: list[Callable[[], Check]] = []


def register(check: Callable[[], Check]) -> None:
    """Adds an app's check to every round (once, however often ready() runs)."""
    if check not in _registered:
        _registered.append(check)


def run_checks() -> list[Check]:
    return [check_database(), check_redis(), *(check() for check in _registered)]


_last_verdict: tuple[float, bool] | None = None
_verdict_lock = threading.Lock()


def healthy_recently() -> bool:
    """All checks ok, as found at most HEALTHZ_CACHE_SECONDS ago in this process.
    Kept in the process, not in Redis: the answer must not need Redis to be up."""
    global _last_verdict
    with _verdict_lock:
        now = time.monotonic()
        if _last_verdict is None or now - _last_verdict[0] >= settings.HEALTHZ_CACHE_SECONDS:
            _last_verdict = (now, all(check.ok for check in run_checks()))
        return _last_verdict[1]
