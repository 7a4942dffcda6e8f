"""Logging in behind a front end (LOGIN_METHOD=remote_user): the name it passes is
the cluster account, checked like any other; a header is believed from the site's
front end only; a Kerberos realm is stripped for the site's own realms only; Unix
groups make instructors; refusals get a clear page (403)."""

import ipaddress
import subprocess

import pytest
from axes.models import AccessAttempt
from django.contrib.auth.models import User
from django.test import Client

from portal.logins import INSTRUCTORS
from portal.models import ClusterAccount
from tests.names import unique_name

pytestmark = pytest.mark.django_db


def test_the_front_ends_user_is_logged_in_as_their_cluster_account(
    remote_user_login, cluster_username
) -> None:
    client = Client()

    home = client.get("/", REMOTE_USER=cluster_username)

    assert home.status_code == 200
    assert f'<code class="account">{cluster_username}</code>' in home.content.decode()
    user = User.objects.get(username=cluster_username)
    assert user.cluster_account.username == cluster_username
    assert not (user.has_usable_password() or user.is_staff or user.is_superuser)
    # The session carries on; a request without the name is logged out.
    assert client.get("/", REMOTE_USER=cluster_username).status_code == 200
    assert client.get("/").status_code == 302


def test_behind_a_proxy_the_header_is_a_setting_believed_from_the_proxy_only(
    remote_user_login, settings, cluster_username
) -> None:
    settings.REMOTE_USER_HEADER = "HTTP_X_REMOTE_USER"
    settings.REMOTE_USER_PROXIES = [ipaddress.ip_network("10.1.2.0/24")]
    named = {"X-Remote-User": cluster_username}

    proxied = Client(headers=named, REMOTE_ADDR="10.1.2.3")
    assert proxied.get("/").status_code == 200
    # Anyone else who sends the header names nobody, and a session it made ends.
    assert Client(headers=named, REMOTE_ADDR="192.0.2.7").get("/").status_code == 302
    assert proxied.get("/", REMOTE_ADDR="192.0.2.7").status_code == 302
    # The WSGI variable counts no more once the site names a header.
    assert Client(REMOTE_ADDR="10.1.2.3").get("/", REMOTE_USER=cluster_username).status_code == 302


def test_a_proxy_may_prove_itself_with_a_shared_secret_instead(
    remote_user_login, settings, cluster_username
) -> None:
    settings.REMOTE_USER_HEADER = "HTTP_X_REMOTE_USER"
    settings.REMOTE_USER_PROXY_SECRET = "s3cret-of-the-front-end"
    named = {"X-Remote-User": cluster_username}

    right = Client(headers=named | {"X-Storagelab-Proxy-Secret": "s3cret-of-the-front-end"})
    assert right.get("/").status_code == 200
    wrong = Client(headers=named | {"X-Storagelab-Proxy-Secret": "guess"})
    assert wrong.get("/").status_code == 302
    assert Client(headers=named).get("/").status_code == 302


def test_only_the_sites_own_realms_are_stripped(
    remote_user_login, settings, make_cluster_username
) -> None:
    ours, theirs = make_cluster_username(), make_cluster_username()
    settings.REMOTE_USER_REALMS = ["EXAMPLE.ORG"]

    assert Client().get("/", REMOTE_USER=f"{ours}@EXAMPLE.ORG").status_code == 200
    assert User.objects.get(username=ours).cluster_account.username == ours

    refused = Client().get("/", REMOTE_USER=f"{theirs}@EVIL.ORG")
    assert refused.status_code == 403
    assert "EVIL.ORG is not a realm whose users may log in here" in refused.content.decode()
    # Realms are named exactly: another's case, or a realm of ours as a suffix, is not ours.
    for realm in ("example.org", "EVIL.EXAMPLE.ORG"):
        assert Client().get("/", REMOTE_USER=f"{theirs}@{realm}").status_code == 403
    assert not User.objects.filter(username__startswith=theirs).exists()


@pytest.mark.parametrize(
    ("name", "reason"),
    [("root", "never run as root"), ("nosuch-q8w3", "not an account of this system")],
    ids=["root", "unknown"],
)
def test_a_refused_account_gets_a_clear_page_on_every_request(
    remote_user_login, name: str, reason: str
) -> None:
    client = Client()
    for path in ("/", "/lab/", "/login/"):
        page = client.get(path, REMOTE_USER=name)
        assert page.status_code == 403
        text = page.content.decode()
        assert f"You logged in as <strong>{name}</strong>" in text
        assert reason in text and "HPC support" in text
    assert not User.objects.filter(username=name).exists()
    assert not ClusterAccount.objects.exists()


def test_a_local_login_is_never_taken_over(remote_user_login, cluster_username) -> None:
    User.objects.create_user(cluster_username, password="break-Glass-1")

    page = Client().get("/", REMOTE_USER=cluster_username)

    assert page.status_code == 403 and "local login named" in page.content.decode()


def test_members_of_the_instructor_unix_groups_are_instructors(
    remote_user_login, settings, make_cluster_username
) -> None:
    teacher_username, trainee_username = make_cluster_username(), make_cluster_username()
    group = unique_name("slg")
    subprocess.run(["groupadd", group], check=True)
    try:
        subprocess.run(
            ["gpasswd", "--add", teacher_username, group], check=True, capture_output=True
        )
        settings.INSTRUCTOR_UNIX_GROUPS = ["hpc-staff", group]

        Client().get("/", REMOTE_USER=teacher_username)
        Client().get("/", REMOTE_USER=trainee_username)

        assert User.objects.get(username=teacher_username).groups.filter(name=INSTRUCTORS).exists()
        assert not User.objects.get(username=trainee_username).groups.exists()
        # Out of the group, out of the Instructors at the next login.
        subprocess.run(
            ["gpasswd", "--delete", teacher_username, group], check=True, capture_output=True
        )
        Client().get("/", REMOTE_USER=teacher_username)
        assert not User.objects.get(username=teacher_username).groups.exists()
    finally:
        subprocess.run(["groupdel", group], check=False)


def test_refused_single_sign_ons_never_pause_the_classrooms_address(
    remote_user_login, make_user, cluster_username
) -> None:
    """django-axes counts wrong passwords by user name and address; refused SSO logins
    (no password, no user name) must not lock everyone behind one address out."""
    for _ in range(8):
        assert Client().get("/", REMOTE_USER="nosuch-q8w3").status_code == 403
    assert not AccessAttempt.objects.exists()
    # Even failures without a user name from this address, as a failed SSO attempt
    # reported to django.contrib.auth would leave, do not hold an SSO login back.
    AccessAttempt.objects.create(
        username=None, ip_address="127.0.0.1", failures_since_start=10, user_agent=""
    )
    assert Client().get("/", REMOTE_USER=cluster_username).status_code == 200

    # Wrong passwords on the local form are still paused.
    ada = make_user(password="Ada-pass-1")
    client = Client()
    for _ in range(4):
        client.post("/login/", {"username": ada.username, "password": "guess"})
    assert (
        client.post("/login/", {"username": ada.username, "password": "guess"}).status_code == 429
    )


def test_logging_out_goes_to_the_front_ends_logout(
    remote_user_login, settings, cluster_username
) -> None:
    client = Client()
    client.get("/", REMOTE_USER=cluster_username)
    settings.REMOTE_USER_LOGOUT_URL = (
        "https://portal.example.org/oidc?logout=https%3A%2F%2Fexample.org"
    )

    out = client.post("/logout/", REMOTE_USER=cluster_username)

    assert out["Location"] == settings.REMOTE_USER_LOGOUT_URL
    assert "_auth_user_id" not in client.session


def test_without_a_front_end_logout_the_user_is_told_they_are_still_in(
    remote_user_login, cluster_username
) -> None:
    client = Client()
    client.get("/", REMOTE_USER=cluster_username)

    out = client.post("/logout/", REMOTE_USER=cluster_username, follow=True)

    # The front end names them again at the login page: they are back home, told why.
    assert out.redirect_chain == [("/login/", 302), ("/", 302)]
    assert "still logged in through your site&#x27;s single sign-on" in out.content.decode()
