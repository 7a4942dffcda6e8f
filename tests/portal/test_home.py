import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_it_sends_anonymous_users_to_the_login_page(client: Client) -> None:
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"].startswith("/login/")


def test_it_says_who_you_are_and_which_cluster_account_you_run_as(client, make_user) -> None:
    user = make_user("sl-trainee9")
    client.force_login(user)

    page = client.get("/").content.decode()

    assert user.username in page
    assert "Your benchmark jobs run on the cluster as" in page
    assert "sl-trainee9" in page


def test_it_explains_what_to_do_without_a_cluster_account(client, make_user) -> None:
    client.force_login(make_user())

    page = client.get("/").content.decode()

    assert "No cluster account is linked" in page
    assert "Ask your instructor" in page


def test_a_wrong_password_gets_a_clear_message(client, make_user) -> None:
    user = make_user()

    response = client.post("/login/", {"username": user.username, "password": "nope"})

    assert response.status_code == 200
    assert "did not match" in response.content.decode()


def test_logout_needs_a_post(client, make_user) -> None:
    client.force_login(make_user())
    assert client.get("/logout/").status_code == 405
    assert client.post("/logout/").status_code == 302
    assert client.get("/").status_code == 302
