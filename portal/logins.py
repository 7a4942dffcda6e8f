"""How an identity from single sign-on (OpenID Connect, or a front end's REMOTE_USER)
becomes a portal login. The rule is one function, `single_sign_on`, whatever the source.

The name the identity provider gives IS the cluster account: the portal user of an
SSO login has that name and runs jobs as that Unix account, and nobody chooses or
changes it in the portal. So the name must pass the same check as any linked account
(portal/accounts.py), and nobody is created or logged in when it does not. An SSO
login never takes over a local login (one with a password: the demo's, break-glass
admins') and never grants staff or superuser.
"""

import logging

from django.contrib.admin.models import ADDITION, LogEntry
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, Group, Permission
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from portal.accounts import job_account_problem
from portal.models import ClusterAccount, cluster_username_validator

log = logging.getLogger(__name__)

INSTRUCTORS = "Instructors"  # the group the demo puts its instructor in


class LoginRefused(Exception):
    """An identity that may not log in. Not a PermissionDenied: django.contrib.auth
    would turn that into a failed login, and nothing would say why."""

    def __init__(self, identity: str, reason: str) -> None:
        super().__init__(f"{identity}: {reason}")
        self.identity = identity
        self.reason = reason


def refused_page(request: HttpRequest, refused: LoginRefused) -> HttpResponse:
    """What a refused identity sees (403): who they are, why, and whom to ask."""
    ctx = {"identity": refused.identity, "reason": refused.reason}
    return render(request, "registration/login_refused.html", ctx, status=403)


def instructors_group() -> Group:
    """The group whose members may create and teach courses."""
    group, _ = Group.objects.get_or_create(name=INSTRUCTORS)
    group.permissions.add(Permission.objects.get(codename="teach_course"))
    return group


def single_sign_on(
    name: str, *, source: str, instructor: bool | None, profile: dict[str, str] | None = None
) -> AbstractBaseUser:
    """The portal user for cluster account `name`, as `source` vouched for it: created
    with its account linked at the first login. `instructor` puts the user in the
    Instructors group or takes them out (None: the site manages that by hand);
    `profile` sets fields such as first_name. Raises LoginRefused, having created
    nothing, when `name` may not log in."""
    try:
        return _single_sign_on(name, source, instructor, profile or {})
    except IntegrityError:
        # Two first requests at once (a front end vouches for every request): the
        # other one created the login; this one finds it.
        return _single_sign_on(name, source, instructor, profile or {})


@transaction.atomic
def _single_sign_on(
    name: str, source: str, instructor: bool | None, profile: dict[str, str]
) -> AbstractBaseUser:
    problem = _name_problem(name)
    if problem:
        raise LoginRefused(name, problem)
    User = get_user_model()
    user = User.objects.select_for_update().filter(username=name).first()
    if user is None:
        user = User(username=name)
        user.set_unusable_password()
    elif user.has_usable_password():
        raise LoginRefused(
            name,
            f"The portal already has a local login named {name}, with a password: a "
            f"login through {source} cannot take it over.",
        )
    elif not user.is_active:
        raise LoginRefused(name, f"The portal login {name} is disabled.")
    for field, value in profile.items():
        setattr(user, field, value[: User._meta.get_field(field).max_length])
    user.save()
    _link(user, name, source)
    if instructor is not None:
        _set_instructor(user, instructor)
    return user


def _name_problem(name: str) -> str | None:
    try:
        cluster_username_validator(name)
    except ValidationError:
        return (
            f"{name!r} cannot be the name of a cluster account "
            "(lower-case letters, digits, '_' or '-')."
        )
    return job_account_problem(name)


def _link(user: AbstractBaseUser, name: str, source: str) -> None:
    """Links the user to cluster account `name`, once. An SSO user's link is the name
    their provider gives; a link that says otherwise was made by hand, and is refused
    rather than silently used or rewritten."""
    account = ClusterAccount.objects.filter(username=name).select_related("user").first()
    if account and account.user_id != user.pk:
        raise LoginRefused(
            name,
            f"The cluster account {name} is linked to another portal login "
            f"({account.user.get_username()}).",
        )
    linked = ClusterAccount.objects.filter(user=user).first()
    if linked and linked.username != name:
        raise LoginRefused(
            name,
            f"Your portal login is linked to the cluster account {linked.username}, "
            f"but {source} says your account is {name}.",
        )
    if linked:
        return
    account = ClusterAccount.objects.create(user=user, username=name)
    # The admin's history says who linked which account: here the user, by logging in.
    LogEntry.objects.log_actions(
        user_id=user.pk,
        queryset=[account],
        action_flag=ADDITION,
        change_message=(
            f"Linked portal login {user.get_username()} to cluster account {name} "
            f"at their first login through {source}"
        ),
        single_object=True,
    )
    log.info("linked cluster account %s to its new portal login (%s)", name, source)


def _set_instructor(user: AbstractBaseUser, instructor: bool) -> None:
    group = instructors_group()
    if instructor:
        user.groups.add(group)
    else:
        user.groups.remove(group)


def not_a_password_login(request, credentials: dict | None) -> bool:
    """django-axes throttles password logins only (AXES_WHITELIST_CALLABLE). An SSO login
    has no password to guess here; counted by user name (none) and address, a few
    refused ones would pause every SSO login of a classroom behind one address."""
    return credentials is not None and not credentials.get("password")
