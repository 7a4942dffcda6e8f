"""Driving a running portal over HTTP, as a browser without JavaScript would."""

import httpx


def log_in(portal: httpx.Client, username: str, password: str) -> None:
    """Logs in with the local form; fails the test with the page when it does not."""
    assert portal.get("/login/").status_code == 200
    response = portal.post(
        "/login/",
        data={
            "username": username,
            "password": password,
            "csrfmiddlewaretoken": portal.cookies["csrftoken"],
        },
        follow_redirects=False,
    )
    assert response.status_code == 302, f"the login did not go through:\n{response.text}"
    assert "/login/" not in response.headers["location"]
