"""One lock across every process of the portal, held until the transaction ends: a
PostgreSQL advisory lock named by a string. For a decision that reads, then acts on
what it read, where no row exists to lock (which run of an account's is the latest in
Slurm; which targets have a canary going)."""

from django.db import connection


def hold(name: str) -> None:
    """Waits for the lock `name`, then holds it until the current transaction ends
    (call inside transaction.atomic)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [name])
