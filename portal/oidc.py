"""Logging in with OpenID Connect (LOGIN_METHOD=oidc), on mozilla-django-oidc: its
code flow (state, nonce, the token's signature) with our rule for who the user is
(portal/logins.py). The cluster account is the claim OIDC_USERNAME_CLAIM; instructors
are the members of OIDC_INSTRUCTOR_GROUPS in the claim OIDC_GROUPS_CLAIM. A login is
pinned to the person's (iss, sub) at its first sign-on and checked after; the userinfo
answer must be about the ID token's subject."""

import logging
import time
from urllib.parse import urlencode

import requests
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import BACKEND_SESSION_KEY
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import SuspiciousOperation
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, resolve_url
from mozilla_django_oidc.auth import OIDCAuthenticationBackend
from mozilla_django_oidc.views import (
    OIDCAuthenticationCallbackView,
    OIDCAuthenticationRequestView,
)

from portal.errors import NotFound
from portal.logins import LoginRefused, refused_page, single_sign_on
from portal.models import OidcIdentity

log = logging.getLogger(__name__)

BACKEND = "portal.oidc.OIDCBackend"
# Claims copied to the portal user at each login, for names on pages and exports.
PROFILE_CLAIMS = {"given_name": "first_name", "family_name": "last_name", "email": "email"}


class OIDCBackend(OIDCAuthenticationBackend):
    def verify_token(self, token: str, **kwargs) -> dict:
        # The library checks the signature and the nonce; a token the provider made
        # for another client, or one past its time, is no login here either.
        payload = super().verify_token(token, **kwargs)
        audience = payload.get("aud")
        audiences = [audience] if isinstance(audience, str) else list(audience or [])
        if settings.OIDC_RP_CLIENT_ID not in audiences:
            raise SuspiciousOperation("ID token issued for another client (aud)")
        if not isinstance(payload.get("exp"), int | float) or payload["exp"] < time.time():
            raise SuspiciousOperation("ID token expired (exp)")
        return payload

    def get_user(self, user_id: int):
        # Django's: a login disabled in the admin ends its sessions too (the library's
        # own get_user skips that check).
        return ModelBackend.get_user(self, user_id)

    def get_or_create_user(self, access_token: str, id_token: str, payload: dict):
        provider = settings.OIDC_PROVIDER_NAME
        issuer, subject = payload.get("iss"), payload.get("sub")
        if not (isinstance(issuer, str) and issuer and isinstance(subject, str) and subject):
            raise LoginRefused("you", f"{provider}'s ID token names no issuer or subject.")
        userinfo = self.get_userinfo(access_token, id_token, payload)
        # OpenID Connect Core 5.3.2: the user information must be about the person the
        # ID token is (a userinfo answer of someone else's token is no login).
        if userinfo.get("sub") != subject:
            raise LoginRefused(
                str(subject),
                f"{provider}'s user information is not about the person its ID token names.",
            )
        # The ID token's claims, and the userinfo endpoint's over them: providers put
        # a groups claim in one or the other, as they are configured.
        claims = {**payload, **userinfo}
        name = claims.get(settings.OIDC_USERNAME_CLAIM)
        if not isinstance(name, str) or not name:
            who = claims.get("email") or subject
            raise LoginRefused(
                str(who),
                f"{provider} did not say which cluster account is yours "
                f"(its answer has no {settings.OIDC_USERNAME_CLAIM} claim).",
            )
        with transaction.atomic():  # a login refused by its pin creates nothing
            user = single_sign_on(
                name,
                source=provider,
                instructor=_instructor(claims),
                profile={
                    field: claims[claim]
                    for claim, field in PROFILE_CLAIMS.items()
                    if isinstance(claims.get(claim), str)
                },
            )
            _pin(user, issuer, subject)
        return user


def _pin(user: AbstractBaseUser, issuer: str, subject: str) -> None:
    """Pins the login to the provider's (issuer, subject) at its first sign-on; later
    ones must be the same person. The name claim alone would let whoever gets that
    name at the provider (a renamed or reused account) into someone else's login."""
    provider = settings.OIDC_PROVIDER_NAME
    name = user.get_username()
    pinned = OidcIdentity.objects.filter(user=user).first()
    if pinned is not None:
        if (pinned.issuer, pinned.subject) != (issuer, subject):
            raise LoginRefused(
                name,
                f"The portal login {name} belongs to another person at {provider} (the one "
                "who first logged in with it); your identity there is not that one.",
            )
        return
    other = OidcIdentity.objects.filter(issuer=issuer, subject=subject).select_related("user")
    if (taken := other.first()) is not None:
        raise LoginRefused(
            name,
            f"Your identity at {provider} is the portal login {taken.user.get_username()}, "
            f"not {name}: was your account renamed at {provider}?",
        )
    OidcIdentity.objects.create(user=user, issuer=issuer[:255], subject=subject[:255])


def _instructor(claims: dict) -> bool | None:
    """Whether the claims make an instructor; None when the site names no groups."""
    if not settings.OIDC_INSTRUCTOR_GROUPS:
        return None
    groups = claims.get(settings.OIDC_GROUPS_CLAIM) or []
    if isinstance(groups, str):
        groups = [groups]
    return bool(set(settings.OIDC_INSTRUCTOR_GROUPS) & set(groups))


def _only_with_oidc(request: HttpRequest) -> None:
    # The URLs always exist; they answer only when the site logs in with OIDC.
    if settings.LOGIN_METHOD != "oidc":
        raise NotFound("This site does not log in with OpenID Connect.")


class Start(OIDCAuthenticationRequestView):
    """Sends the browser to the provider's login."""

    def dispatch(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        _only_with_oidc(request)
        return super().dispatch(request, *args, **kwargs)


class Callback(OIDCAuthenticationCallbackView):
    """Where the provider sends the browser back: a login, or a page saying why not."""

    def dispatch(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        _only_with_oidc(request)
        try:
            return super().dispatch(request, *args, **kwargs)
        except LoginRefused as refused:
            log.warning("login through %s refused: %s", settings.OIDC_PROVIDER_NAME, refused)
            return refused_page(request, refused)
        except requests.RequestException as e:
            # The provider's token, keys or userinfo endpoint failed us: not the user's
            # doing, and no reason for a 500.
            log.error("login through %s failed: %s", settings.OIDC_PROVIDER_NAME, e)
            messages.error(
                request,
                f"{settings.OIDC_PROVIDER_NAME} did not answer the portal. Try again in a "
                "minute; if it goes on, tell the HPC support team.",
            )
            return redirect(settings.LOGIN_URL)

    def login_failure(self) -> HttpResponse:
        # Denied at the provider, an expired or replayed attempt, a disabled login.
        messages.error(
            self.request,
            f"Logging in through {settings.OIDC_PROVIDER_NAME} did not complete. Try again.",
        )
        return redirect(settings.LOGIN_URL)


def end_session_url(request: HttpRequest) -> str | None:
    """Where to log out at the provider too (OIDC_OP_LOGOUT_ENDPOINT), for a session
    that logged in through it; else None. Without it the provider's own session
    stays, and its button logs the same person straight back in."""
    if not settings.OIDC_OP_LOGOUT_ENDPOINT or request.session.get(BACKEND_SESSION_KEY) != BACKEND:
        return None
    params = {
        "client_id": settings.OIDC_RP_CLIENT_ID,
        "post_logout_redirect_uri": request.build_absolute_uri(resolve_url(settings.LOGIN_URL)),
    }
    if request.session.get("oidc_id_token"):
        params["id_token_hint"] = request.session["oidc_id_token"]
    return f"{settings.OIDC_OP_LOGOUT_ENDPOINT}?{urlencode(params)}"
