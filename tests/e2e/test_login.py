"""A person logs in through Debian's Chromium and lands on the home page."""

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.browser import ARTIFACTS


@pytest.mark.django_db(transaction=True)
def test_a_trainee_logs_in_and_sees_their_cluster_account(
    live_server, page: Page, make_user
) -> None:
    user = make_user("sl-trainee1", password="a-Good-pass-1")

    page.goto(f"{live_server.url}/")
    expect(page.get_by_role("heading", name="Log in")).to_be_visible()
    page.get_by_label("User name").fill(user.username)
    page.get_by_label("Password").fill("a-Good-pass-1")
    page.get_by_role("button", name="Log in").click()

    expect(page.get_by_role("heading", name="Welcome, Ada")).to_be_visible()
    expect(page.locator("code.account")).to_have_text("sl-trainee1")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / "home.png", full_page=True)

    page.get_by_role("button", name="Log out").click()
    expect(page.get_by_role("heading", name="Log in")).to_be_visible()
