"""Logging in behind a front end that authenticates every request (LOGIN_METHOD=
remote_user): Apache with mod_auth_openidc, Shibboleth or Kerberos, or Open
OnDemand's. The front end names the user in REMOTE_USER_HEADER: the WSGI variable
REMOTE_USER (Apache, mod_wsgi), or HTTP_X_REMOTE_USER for a header X-Remote-User set
by a reverse proxy. Whoever can set the header is whoever they name: it is believed
only from the front end's addresses (REMOTE_USER_PROXIES) and/or with its secret
(REMOTE_USER_PROXY_SECRET), portal/proxies.py; the proxy must still remove any such
header a client sends. The name is the cluster account (portal/logins.py);
instructors are the members of INSTRUCTOR_UNIX_GROUPS, if the site names any."""

import grp
import logging
import os

from django.conf import settings
from django.contrib.auth.backends import RemoteUserBackend as DjangoRemoteUserBackend
from django.contrib.auth.middleware import RemoteUserMiddleware as DjangoRemoteUserMiddleware
from django.http import HttpRequest, HttpResponse

from portal.accounts import passwd_entry
from portal.logins import LoginRefused, refused_page, single_sign_on
from portal.proxies import from_remote_user_proxy

log = logging.getLogger(__name__)

BACKEND = "portal.remote_user.RemoteUserBackend"
SOURCE = "the site's single sign-on"


class RemoteUserMiddleware(DjangoRemoteUserMiddleware):
    # Synchronous only: the portal runs under WSGI, and Django's async path reads
    # the header differently (always "HTTP_" + header).
    async_capable = False

    @property
    def header(self) -> str:
        return settings.REMOTE_USER_HEADER

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if self.header in request.META and not from_remote_user_proxy(request):
            # Sent by someone other than the front end: it names nobody (a session it
            # logged in before ends, as when a front end stops naming the user).
            log.warning(
                "%s from %s, not the site's front end: ignored",
                self.header,
                request.META.get("REMOTE_ADDR", "?"),
            )
            del request.META[self.header]
        try:
            self.process_request(request)
        except LoginRefused as refused:
            log.warning("login through %s refused: %s", SOURCE, refused)
            return refused_page(request, refused)
        return self.get_response(request)


class RemoteUserBackend(DjangoRemoteUserBackend):
    def authenticate(self, request: HttpRequest | None, remote_user: str):
        if not remote_user:
            return None
        name = self.clean_username(remote_user)
        return single_sign_on(name, source=SOURCE, instructor=_instructor(name))

    def clean_username(self, username: str) -> str:
        # A Kerberos principal (alice@EXAMPLE.ORG) or a Shibboleth eppn names the
        # account before the @, for the site's own realms only: alice@ELSEWHERE is
        # someone else, whatever account name they share.
        name, at, realm = username.rpartition("@")
        if not at:
            return username
        if realm in settings.REMOTE_USER_REALMS:
            return name
        raise LoginRefused(
            username,
            f"{realm} is not a realm whose users may log in here (the site accepts "
            f"{', '.join(settings.REMOTE_USER_REALMS) or 'no realm'}).",
        )


def _instructor(name: str) -> bool | None:
    """Whether the account is in one of INSTRUCTOR_UNIX_GROUPS (its primary group
    counts); None when the site names no groups."""
    if not settings.INSTRUCTOR_UNIX_GROUPS:
        return None
    entry = passwd_entry(name)
    if entry is None:
        return False  # not an account: single_sign_on refuses it anyway
    gids = os.getgrouplist(name, entry.pw_gid)
    names = set()
    for gid in gids:
        try:
            names.add(grp.getgrgid(gid).gr_name)
        except KeyError:
            continue
    return bool(names & set(settings.INSTRUCTOR_UNIX_GROUPS))
