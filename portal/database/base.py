"""Django's PostgreSQL backend, with a health check that costs no round trip.

A web worker keeps its connection across requests (CONN_MAX_AGE) and checks it
before each request's first query (CONN_HEALTH_CHECKS), so that a PostgreSQL restart
costs no trainee a 500. Django checks with a `SELECT 1`: a round trip to PostgreSQL
for every request, a quarter of those of a runs panel poll that answers 304, and a
class polls about 100 times a second.

The check here asks the connection's socket instead. Between two requests an idle
connection has nothing to read: PostgreSQL only speaks when spoken to. Anything to
read means the connection is over: the server's goodbye as it shuts down or ends the
backend ("terminating connection due to administrator command"), or the socket's
end. A connection that is not idle (a transaction left open or failed) gets
Django's own check."""

import select

from django.db.backends.postgresql import base
from psycopg import Error, pq


class DatabaseWrapper(base.DatabaseWrapper):
    def is_usable(self) -> bool:
        if self.connection is None or self.connection.closed:
            return False
        pgconn = self.connection.pgconn
        if pgconn.transaction_status != pq.TransactionStatus.IDLE:
            return super().is_usable()
        try:
            poller = select.poll()
            poller.register(pgconn.socket, select.POLLIN)
            return not poller.poll(0)
        except (Error, OSError, ValueError):  # no socket left to ask
            return False
