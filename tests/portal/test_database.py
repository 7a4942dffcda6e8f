"""The database backend's health check (portal/database): a kept connection is
checked before each request's first query without asking PostgreSQL, and one that
PostgreSQL ended is replaced rather than failing the request."""

import time

import psycopg
import pytest
from django.db import connection

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def other_connection():
    """A connection of its own, to watch and end the portal's backend."""
    s = connection.settings_dict
    params = {"host": s["HOST"], "port": s["PORT"], "dbname": s["NAME"]}
    with psycopg.connect(**params, user=s["USER"], password=s["PASSWORD"]) as other:
        other.autocommit = True
        yield other


def last_query(other: psycopg.Connection, pid: int) -> str:
    return other.execute("SELECT query FROM pg_stat_activity WHERE pid = %s", [pid]).fetchone()[0]


def next_request_checks() -> None:
    """What Django does between two requests of a web worker (close_old_connections),
    then the check before the new request's first query."""
    connection.close_if_unusable_or_obsolete()
    connection.close_if_health_check_failed()


def test_a_healthy_kept_connection_is_checked_without_a_round_trip(other_connection) -> None:
    connection.ensure_connection()
    pid = connection.connection.info.backend_pid
    with connection.cursor() as cursor:
        cursor.execute("SELECT 'the last query of the request'")
    before = last_query(other_connection, pid)

    next_request_checks()

    assert connection.connection.info.backend_pid == pid, "the connection was kept"
    assert last_query(other_connection, pid) == before, "the check sent a query"


def test_a_connection_postgresql_ended_is_replaced_before_the_next_query(
    other_connection,
) -> None:
    connection.ensure_connection()
    pid = connection.connection.info.backend_pid
    other_connection.execute("SELECT pg_terminate_backend(%s)", [pid])
    deadline = time.monotonic() + 5
    while connection.is_usable() and time.monotonic() < deadline:
        time.sleep(0.01)  # the backend's goodbye is on its way

    next_request_checks()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (new_pid,) = cursor.fetchone()

    assert new_pid != pid
