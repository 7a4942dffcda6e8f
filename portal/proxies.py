"""Who is at the other end of a request, behind the site's proxies.

- `client_address`: the client's address for the login throttle (django-axes calls
  it, AXES_CLIENT_IP_CALLABLE). With TRUSTED_PROXY_COUNT proxies in front, each one
  appends the address it saw to X-Forwarded-For, so the client is that many places
  from the right; anything further left is what the client itself wrote. Each step
  to the left is taken only from a proxy of TRUSTED_PROXIES: a client that reaches
  the portal directly, or an inner proxy past the outer ones, is counted by its own
  address, whatever header it sends, so it cannot rotate made-up addresses (a proxy
  on a Unix socket is on this machine, and trusted). With no proxy (0), the header
  is the client's own and is ignored. An IPv6 client is counted by its /64, the block
  one machine or one site's network gets (and a machine's privacy addresses rotate
  within), so that it cannot rotate addresses either. TRUSTED_PROXIES is this machine
  alone unless the site names its proxies: a private network may be the cluster's, where
  any job could write any X-Forwarded-For. So a "usual address" (portal/lockouts.py,
  axes' access log) is always one a proxy of the site saw, or the peer itself, never
  what a client wrote.
- `listening_refusal`: why the web server must not start (gunicorn's on_starting hook,
  docker/gunicorn.conf.py, with the addresses it is about to listen on; and `check
  --deploy`, portal/checks.py, with GUNICORN_BIND): with a proxy count above 0 and no
  TRUSTED_PROXIES named, a proxy elsewhere would not be trusted, every client behind it
  would be counted as its one address, and so the pair's pause and every user's usual
  address would be shared by everyone. Listening on loopback (or a Unix socket) only,
  the proxy can only be this machine's, which the default trusts.
- `from_remote_user_proxy`: whether a request's REMOTE_USER header may be believed:
  the WSGI variable REMOTE_USER is set by the server itself (Apache's mod_wsgi); a
  header (X-Remote-User) only from REMOTE_USER_PROXIES' addresses and with the
  REMOTE_USER_PROXY_SECRET the proxy adds, whichever of the two the site configured
  (settings.py refuses to start with neither).
"""

import hmac
import ipaddress
from collections.abc import Iterable

from django.conf import settings
from django.http import HttpRequest

# The header a front end adds to prove it is the site's (with REMOTE_USER_PROXY_SECRET).
SECRET_HEADER = "X-Storagelab-Proxy-Secret"  # noqa: S105 -- a header's name


def client_address(request: HttpRequest) -> str:
    peer = request.META.get("REMOTE_ADDR", "")
    hops = [hop.strip() for hop in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    hops = [hop for hop in hops if hop]
    address = _address(peer)  # None: a Unix socket's peer
    for _ in range(settings.TRUSTED_PROXY_COUNT):
        if not hops or not _trusted(address):
            break  # the client itself, or a proxy that named nobody behind it
        named = _address(hops.pop())
        if named is None:
            break  # a proxy appends an address: this is not one
        address = named
    return _counted(address) if address else peer


def listening_refusal(binds: Iterable[str]) -> str | None:
    """Why the portal may not serve on `binds` (gunicorn's: HOST:PORT, [IPv6]:PORT,
    unix:PATH, fd://N) with the site's proxy settings; None when it may."""
    if settings.TRUSTED_PROXY_COUNT <= 0 or settings.TRUSTED_PROXIES_NAMED:
        return None
    beyond = [bind for bind in binds if not _on_this_machine(bind)]
    if not beyond:
        return None
    return (
        f"TRUSTED_PROXY_COUNT is {settings.TRUSTED_PROXY_COUNT} and the web server would "
        f"listen on {', '.join(beyond)}, beyond this machine, but TRUSTED_PROXIES names no "
        "proxy: only one on this machine would be believed, and every client behind a "
        "proxy elsewhere would be counted as the proxy's one address (one user's wrong "
        "passwords would pause that user for everyone, and everyone would be at that "
        "user's usual address). Name the addresses your proxies reach the portal from "
        "(TRUSTED_PROXIES=10.0.0.5), or listen on 127.0.0.1 only, or set "
        "TRUSTED_PROXY_COUNT=0 if no proxy is in front."
    )


def _on_this_machine(bind: str) -> bool:
    """Whether only this machine can reach a gunicorn bind: a Unix socket or a loopback
    address. A socket handed over (fd://) or a host name other than localhost may be
    anything, and is not."""
    if bind.startswith("unix:"):
        return True
    if bind.startswith("fd://"):
        return False
    host = bind
    if bind.startswith("["):
        host = bind[1:].partition("]")[0]
    elif bind.count(":") == 1:
        host = bind.partition(":")[0]
    if host == "localhost":
        return True
    address = _address(host)
    return address is not None and address.is_loopback


def _trusted(address: ipaddress.IPv4Address | ipaddress.IPv6Address | None) -> bool:
    if address is None:
        return True  # a Unix socket: only a process of this machine reaches it
    return any(address in network for network in settings.TRUSTED_PROXIES)


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        return address.ipv4_mapped  # ::ffff:192.0.2.1, a dual-stack socket's IPv4 client
    return address


def _counted(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str:
    if isinstance(address, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((address, 64), strict=False).network_address)
    return str(address)


def from_remote_user_proxy(request: HttpRequest) -> bool:
    if settings.REMOTE_USER_HEADER == "REMOTE_USER":
        return True  # the WSGI server's own variable: no client sets it
    if settings.REMOTE_USER_PROXIES:
        try:
            peer = ipaddress.ip_address(request.META.get("REMOTE_ADDR", ""))
        except ValueError:
            return False
        if not any(peer in network for network in settings.REMOTE_USER_PROXIES):
            return False
    if settings.REMOTE_USER_PROXY_SECRET:
        sent = request.headers.get(SECRET_HEADER, "")
        if not hmac.compare_digest(sent.encode(), settings.REMOTE_USER_PROXY_SECRET.encode()):
            return False
    return bool(settings.REMOTE_USER_PROXIES or settings.REMOTE_USER_PROXY_SECRET)
