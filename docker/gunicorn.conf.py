"""gunicorn's settings in the image (`docker/entrypoint.sh web`), read from the
environment like the portal's own.

GUNICORN_BIND      where to listen (default 0.0.0.0:8000, inside the container); several
                   addresses separated by commas. Beyond this machine with a proxy count
                   (TRUSTED_PROXY_COUNT) and no TRUSTED_PROXIES named, gunicorn refuses to
                   start (on_starting, below)
GUNICORN_WORKERS   sync workers (default 2 x cores + 1: a login holds its worker for
                   a password hash, and a class logging in at once must not leave the
                   other pages waiting; bench/ measured it)
GUNICORN_TIMEOUT   seconds a request may take before its worker is replaced (30)
"""

import os

wsgi_app = "portal.wsgi:application"
bind = os.getenv("GUNICORN_BIND", "0.0.0.0:8000").split(",")
workers = int(os.getenv("GUNICORN_WORKERS", str(2 * (os.cpu_count() or 1) + 1)))
timeout = int(os.getenv("GUNICORN_TIMEOUT", "30"))
# A stop (docker stop: TERM) lets requests in flight finish, within compose's 10 s.
graceful_timeout = 8
# Behind the site's TLS proxy, which keeps connections open to reuse them.
keepalive = 5
# Workers' heartbeat files in memory: /tmp of a container may be a slow overlay.
worker_tmp_dir = "/dev/shm"  # noqa: S108 (the heartbeats only, each worker's own file)
# `gunicornc` in the container talks to gunicorn here (the default, in $HOME, is on the
# read-only root filesystem); 0600, the image's user's alone.
control_socket = "/tmp/gunicorn.ctl"  # noqa: S108
# A worker is replaced after this many requests (with jitter, not all at once):
# memory a long-lived worker gathers is given back.
max_requests = 2000
max_requests_jitter = 200
# Logs to stdout/stderr, where `docker compose logs` finds them.
accesslog = "-"
errorlog = "-"
# The client's address as the proxy says it (X-Forwarded-For), the time in ms. The
# request's method, path and protocol, never its query string (%(r)s, %(q)s): the OIDC
# callback's carries the login's code and state, and logs are kept and copied; nor the
# Referer (%(f)s), which may carry another page's.
access_log_format = '%({x-forwarded-for}i)s %(h)s "%(m)s %(U)s %(H)s" %(s)s %(b)s %(M)sms "%(a)s"'


def on_starting(server) -> None:
    """Refuses to start where the login throttle would believe the wrong proxies
    (portal/proxies.py: listening_refusal), with the addresses gunicorn is about to
    listen on, --bind included: gunicorn runs no Django system check of its own. It says
    why on stderr and ends with status 1 (gunicorn's way with a RuntimeError)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
    from django.core.exceptions import ImproperlyConfigured

    from portal.proxies import listening_refusal

    try:
        why = listening_refusal(server.cfg.bind)
    except ImproperlyConfigured as e:  # the settings themselves: said as plainly
        raise RuntimeError(str(e)) from None
    if why:
        raise RuntimeError(why)
