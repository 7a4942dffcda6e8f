"""Who is at the other end of a request, behind the site's proxies.

- `client_address`: the client's address for the login throttle (django-axes calls
  it, AXES_CLIENT_IP_CALLABLE). With TRUSTED_PROXY_COUNT proxies in front, each one
  appends the address it saw to X-Forwarded-For, so the client is that many places
  from the right; anything further left is what the client itself wrote. With no
  proxy (0), the header is the client's own and is ignored.
- `from_remote_user_proxy`: whether a request's REMOTE_USER header may be believed:
  the WSGI variable REMOTE_USER is set by the server itself (Apache's mod_wsgi); a
  header (X-Remote-User) only from REMOTE_USER_PROXIES' addresses and with the
  REMOTE_USER_PROXY_SECRET the proxy adds, whichever of the two the site configured
  (settings.py refuses to start with neither).
"""

import hmac
import ipaddress

from django.conf import settings
from django.http import HttpRequest

# The header a front end adds to prove it is the site's (with REMOTE_USER_PROXY_SECRET).
SECRET_HEADER = "X-Storagelab-Proxy-Secret"  # noqa: S105 -- a header's name


def client_address(request: HttpRequest) -> str:
    peer = request.META.get("REMOTE_ADDR", "")
    count = settings.TRUSTED_PROXY_COUNT
    if count <= 0:
        return peer
    hops = [hop.strip() for hop in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    hops = [hop for hop in hops if hop]
    if len(hops) < count:
        return peer  # fewer proxies than the site said: no address to believe but the peer
    client = hops[-count]
    try:
        return str(ipaddress.ip_address(client))
    except ValueError:
        return peer


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
