"""Logging in with OpenID Connect: the claim names the cluster account, the groups
claim makes instructors, and whatever may not log in gets a clear page (403), with
nothing created. The backend is tested at its one seam (the provider's claims);
the whole code flow against a real provider, through the test client."""

import pwd
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import User
from django.test import Client

from portal.logins import INSTRUCTORS, LoginRefused, instructors_group
from portal.models import ClusterAccount
from portal.oidc import OIDCBackend
from tests.names import unique_name
from tests.sso import INSTRUCTOR_GROUP, PROVIDER_NAME

pytestmark = pytest.mark.django_db

SYSTEM = next(p.pw_name for p in pwd.getpwall() if 0 < p.pw_uid < 1000)  # e.g. daemon


@pytest.fixture
def oidc_settings(settings) -> None:
    settings.LOGIN_METHOD = "oidc"
    settings.OIDC_PROVIDER_NAME = PROVIDER_NAME
    settings.OIDC_RP_CLIENT_ID = "storagelab"
    settings.OIDC_OP_JWKS_ENDPOINT = "http://127.0.0.1:9/jwks"  # never reached here
    settings.OIDC_INSTRUCTOR_GROUPS = [INSTRUCTOR_GROUP]


ISSUER = "https://login.example.org/realms/hpc"


def log_in(claims: dict, sub: str = "s-1", userinfo_sub: str | None = None):
    """What the backend makes of the provider's claims (the userinfo answer) for the
    person `sub` of its ID token."""
    backend = OIDCBackend()
    backend.get_userinfo = lambda *args: {"sub": userinfo_sub or sub, **claims}
    return backend.get_or_create_user("access-token", "id-token", {"iss": ISSUER, "sub": sub})


def test_a_first_login_creates_the_user_with_the_claimed_cluster_account(
    oidc_settings, cluster_username
) -> None:
    user = log_in(
        {"preferred_username": cluster_username, "given_name": "Ada", "email": "ada@example.org"}
    )

    user.refresh_from_db()
    assert user.username == cluster_username
    assert user.cluster_account.username == cluster_username
    assert not user.has_usable_password()
    assert (user.first_name, user.email) == ("Ada", "ada@example.org")
    assert not (user.is_staff or user.is_superuser)
    entry = LogEntry.objects.get(object_repr=cluster_username)
    assert entry.user == user
    assert entry.get_change_message() == (
        f"Linked portal login {cluster_username} to cluster account {cluster_username} "
        f"at their first login through {PROVIDER_NAME}"
    )
    # The next login is the same user, linked once.
    assert log_in({"preferred_username": cluster_username}) == user
    assert LogEntry.objects.filter(object_repr=cluster_username).count() == 1


def test_a_login_is_pinned_to_the_person_who_first_logged_in_with_it(
    oidc_settings, cluster_username
) -> None:
    user = log_in({"preferred_username": cluster_username}, sub="ada-at-the-idp")
    assert (user.oidc_identity.issuer, user.oidc_identity.subject) == (ISSUER, "ada-at-the-idp")

    # Someone else at the provider who now has that name (renamed, reused, edited).
    with pytest.raises(LoginRefused, match="belongs to another person at Test IdP"):
        log_in({"preferred_username": cluster_username, "given_name": "Mallory"}, sub="mallory")

    user.refresh_from_db()
    assert user.first_name != "Mallory" and user.oidc_identity.subject == "ada-at-the-idp"
    assert log_in({"preferred_username": cluster_username}, sub="ada-at-the-idp") == user


def test_a_person_renamed_at_the_provider_is_not_let_into_another_login(
    oidc_settings, make_cluster_username
) -> None:
    first, second = make_cluster_username(), make_cluster_username()
    log_in({"preferred_username": first}, sub="ada-at-the-idp")

    with pytest.raises(
        LoginRefused, match=f"Your identity at Test IdP is the portal login {first}"
    ):
        log_in({"preferred_username": second}, sub="ada-at-the-idp")
    assert not User.objects.filter(username=second).exists()  # nothing was created


def test_user_information_about_another_person_is_no_login(oidc_settings, cluster_username):
    with pytest.raises(LoginRefused, match="not about the person its ID token names"):
        log_in({"preferred_username": cluster_username}, sub="s-1", userinfo_sub="s-2")
    assert not User.objects.filter(username=cluster_username).exists()


def test_the_username_claim_is_a_setting(oidc_settings, settings, cluster_username) -> None:
    settings.OIDC_USERNAME_CLAIM = "uid"

    user = log_in({"preferred_username": "someone-else", "uid": cluster_username})

    assert user.cluster_account.username == cluster_username


def test_the_groups_claim_makes_instructors_and_unmakes_them(
    oidc_settings, cluster_username
) -> None:
    user = log_in({"preferred_username": cluster_username, "groups": ["hpc", INSTRUCTOR_GROUP]})
    assert user.groups.filter(name=INSTRUCTORS).exists()
    assert User.objects.get(pk=user.pk).has_perm("courses.teach_course")

    log_in({"preferred_username": cluster_username, "groups": ["hpc"]})

    assert not user.groups.filter(name=INSTRUCTORS).exists()
    assert not User.objects.get(pk=user.pk).has_perm("courses.teach_course")


def test_without_instructor_groups_the_admin_decides_who_teaches(
    oidc_settings, settings, cluster_username
) -> None:
    settings.OIDC_INSTRUCTOR_GROUPS = []
    user = log_in({"preferred_username": cluster_username})
    user.groups.add(instructors_group())  # by hand, in the admin

    log_in({"preferred_username": cluster_username, "groups": []})

    assert user.groups.filter(name=INSTRUCTORS).exists()


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("root", "never run as root"),
        (SYSTEM, "is a system account"),
        ("nosuch-x7q2", "not an account of this system"),
        ("Ada Lovelace", "cannot be the name of a cluster account"),
    ],
    ids=["root", "system", "unknown", "not-a-name"],
)
def test_an_account_jobs_may_not_run_as_is_refused_and_nothing_is_created(
    oidc_settings, name: str, reason: str
) -> None:
    with pytest.raises(LoginRefused, match=reason) as refused:
        log_in({"preferred_username": name})

    assert refused.value.identity == name
    assert not User.objects.filter(username=name).exists()
    assert not ClusterAccount.objects.exists()


def test_an_account_below_the_uid_floor_is_refused(
    oidc_settings, settings, cluster_username
) -> None:
    settings.CLUSTER_UID_MIN = pwd.getpwnam(cluster_username).pw_uid + 1

    with pytest.raises(LoginRefused, match="system account"):
        log_in({"preferred_username": cluster_username})
    assert not User.objects.filter(username=cluster_username).exists()


def test_a_missing_username_claim_is_refused_naming_the_claim(oidc_settings) -> None:
    with pytest.raises(LoginRefused, match="no preferred_username claim") as refused:
        log_in({"email": "ada@example.org"})
    assert refused.value.identity == "ada@example.org"
    assert not User.objects.exists()


def test_a_local_login_is_never_taken_over(oidc_settings, cluster_username) -> None:
    local = User.objects.create_user(cluster_username, password="break-Glass-1", is_staff=True)

    with pytest.raises(LoginRefused, match="local login named"):
        log_in({"preferred_username": cluster_username})

    local.refresh_from_db()
    assert local.check_password("break-Glass-1") and not hasattr(local, "cluster_account")


def test_a_disabled_login_stays_out(oidc_settings, settings, cluster_username) -> None:
    settings.AUTHENTICATION_BACKENDS = [
        *settings.AUTHENTICATION_BACKENDS,
        "portal.oidc.OIDCBackend",
    ]
    user = log_in({"preferred_username": cluster_username})
    client = Client()
    client.force_login(user, backend="portal.oidc.OIDCBackend")
    assert client.get("/").status_code == 200

    User.objects.filter(pk=user.pk).update(is_active=False)

    assert client.get("/").status_code == 302  # its session ends
    with pytest.raises(LoginRefused, match="disabled"):
        log_in({"preferred_username": cluster_username})


def test_an_account_linked_to_someone_else_is_refused(
    oidc_settings, make_user, cluster_username
) -> None:
    make_user(cluster_username)  # linked by hand to another login

    with pytest.raises(LoginRefused, match="linked to another portal login"):
        log_in({"preferred_username": cluster_username})
    assert not User.objects.filter(username=cluster_username).exists()


# --- the pages ------------------------------------------------------------------


def test_with_oidc_the_login_page_puts_the_provider_above_the_local_form(
    client: Client, oidc_settings
) -> None:
    page = client.get("/login/?next=/lab/").content.decode()

    assert '<a class="brand" href="/">Storage Lab</a>' in page  # not the host's name

    button = page.index(f">Log in with {PROVIDER_NAME}</a>")
    assert 'href="/oidc/login/?next=/lab/"' in page
    assert button < page.index("Local and administrator accounts") < page.index('name="password"')


def test_without_oidc_its_urls_do_not_answer(client: Client) -> None:
    assert client.get("/login/").content.decode().count("Log in with") == 0
    assert client.get("/oidc/login/").status_code == 404
    assert client.get("/oidc/callback/?code=x&state=y").status_code == 404


def test_logging_out_of_an_oidc_login_logs_out_at_the_provider_too(
    client: Client, oidc_settings, settings, make_user
) -> None:
    settings.OIDC_OP_LOGOUT_ENDPOINT = "https://idp.example.org/logout"
    settings.AUTHENTICATION_BACKENDS = [
        *settings.AUTHENTICATION_BACKENDS,
        "portal.oidc.OIDCBackend",
    ]
    client.force_login(make_user(), backend="portal.oidc.OIDCBackend")
    session = client.session
    session["oidc_id_token"] = "the-id-token"
    session.save()

    out = client.post("/logout/")

    target = urlsplit(out["Location"])
    assert target.netloc == "idp.example.org" and target.path == "/logout"
    assert parse_qs(target.query) == {
        "client_id": [settings.OIDC_RP_CLIENT_ID],
        "post_logout_redirect_uri": ["http://testserver/login/"],
        "id_token_hint": ["the-id-token"],
    }
    assert "_auth_user_id" not in client.session
    # A break-glass admin's local login just ends.
    client.force_login(make_user(superuser=True))
    assert client.post("/logout/")["Location"] == "/login/"


# --- the whole code flow, against a real provider ------------------------------


def through_the_provider(client: Client, sub: str, *, deny: bool = False):
    """The browser's part: to the provider, its login form, back to the callback."""
    start = client.get("/oidc/login/?next=/lab/")
    assert start.status_code == 302
    form = {"action": "deny"} if deny else {"sub": sub}
    answer = requests.post(start["Location"], data=form, allow_redirects=False, timeout=10)
    assert answer.status_code == 302, answer.text
    back = urlsplit(answer.headers["Location"])
    assert back.path == "/oidc/callback/"
    return client.get(f"{back.path}?{back.query}")


def test_a_trainee_logs_in_through_the_provider(
    client: Client, oidc_login, cluster_username
) -> None:
    sub = oidc_login.add_user(preferred_username=cluster_username, given_name="Ada")

    landed = through_the_provider(client, sub)

    assert landed.status_code == 302 and landed["Location"] == "/lab/"
    home = client.get("/").content.decode()
    assert "Welcome, Ada" in home
    assert f'<code class="account">{cluster_username}</code>' in home


def test_another_person_claiming_a_pinned_name_at_the_provider_gets_a_clear_page(
    client: Client, oidc_login, cluster_username
) -> None:
    ada = oidc_login.add_user(preferred_username=cluster_username, given_name="Ada")
    assert through_the_provider(client, ada).status_code == 302
    client.post("/logout/")
    mallory = oidc_login.add_user(preferred_username=cluster_username, given_name="Mallory")

    refused = through_the_provider(Client(), mallory)

    assert refused.status_code == 403
    assert "belongs to another person at Test IdP" in refused.content.decode()
    assert User.objects.get(username=cluster_username).first_name == "Ada"


def test_an_unknown_account_gets_a_clear_page_not_a_500(client: Client, oidc_login) -> None:
    name = unique_name("nosuch")
    sub = oidc_login.add_user(preferred_username=name, email="bob@example.org")

    refused = through_the_provider(client, sub)

    assert refused.status_code == 403
    page = refused.content.decode()
    assert f"You logged in as <strong>{name}</strong>" in page
    assert "not an account of this system" in page and "HPC support" in page
    assert not User.objects.filter(username=name).exists()
    assert client.get("/").status_code == 302  # not logged in


def test_denying_at_the_provider_leads_back_to_the_login_page(client: Client, oidc_login) -> None:
    back = through_the_provider(client, "", deny=True)

    assert back.status_code == 302 and back["Location"] == "/login/"
    page = client.get("/login/").content.decode()
    assert f"Logging in through {PROVIDER_NAME} did not complete" in page


def test_a_provider_that_does_not_answer_gets_a_message_not_a_500(
    client: Client, oidc_login, settings, cluster_username
) -> None:
    sub = oidc_login.add_user(preferred_username=cluster_username)
    settings.OIDC_OP_TOKEN_ENDPOINT = "http://127.0.0.1:9/token"  # nothing listens

    back = through_the_provider(client, sub)

    assert back.status_code == 302 and back["Location"] == "/login/"
    assert f"{PROVIDER_NAME} did not answer the portal" in client.get("/login/").content.decode()


@pytest.mark.parametrize(
    ("claims", "why"),
    [
        ({"aud": "another-client", "exp": 4_000_000_000}, "another client"),
        ({"aud": ["x", "y"], "exp": 4_000_000_000}, "another client"),
        ({"aud": "storagelab", "exp": 1_000_000_000}, "expired"),
        ({"aud": "storagelab"}, "expired"),
    ],
)
def test_an_id_token_for_another_client_or_past_its_time_is_no_login(
    oidc_settings, monkeypatch, claims: dict, why: str
) -> None:
    """The library checks the token's signature and nonce; the portal its audience
    and expiry too (a signed token of the same provider for another application)."""
    from django.core.exceptions import SuspiciousOperation
    from mozilla_django_oidc.auth import OIDCAuthenticationBackend

    monkeypatch.setattr(OIDCAuthenticationBackend, "verify_token", lambda *a, **k: claims)

    with pytest.raises(SuspiciousOperation, match=why):
        OIDCBackend().verify_token("signed-token", nonce="n")
    good = {"aud": ["storagelab", "account"], "exp": 4_000_000_000}
    monkeypatch.setattr(OIDCAuthenticationBackend, "verify_token", lambda *a, **k: good)
    assert OIDCBackend().verify_token("signed-token", nonce="n") == good
