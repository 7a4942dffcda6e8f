"""Single sign-on in Debian's Chromium: a trainee logs in through a real OpenID
provider (oidc-provider-mock, its own process) and runs 1a as their cluster account;
behind a front end (REMOTE_USER) they are simply in; whoever has no cluster account
gets a clear page. Screenshots go to /tmp/shots-oidc/."""

import ipaddress
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from jobs.models import BenchmarkRun
from tests.names import unique_name
from tests.sso import PROVIDER_NAME

SHOTS = Path("/tmp/shots-oidc")


@pytest.fixture
def shots() -> Path:
    SHOTS.mkdir(exist_ok=True)
    return SHOTS


def through_the_provider(page: Page, portal: str, sub: str, shots: Path | None = None) -> None:
    """From a page of the lab to the provider's login form and back."""
    # The mock's page links a stylesheet from a CDN; this machine has no internet.
    page.route(re.compile(r"^https://cdn\.jsdelivr\.net/"), lambda route: route.abort())
    page.goto(f"{portal}/lab/")
    expect(page.get_by_role("heading", name="Log in", exact=True)).to_be_visible()
    if shots:
        page.screenshot(path=shots / "1-login-page.png", full_page=True)
    page.get_by_role("link", name=f"Log in with {PROVIDER_NAME}").click()
    expect(page.get_by_role("heading", name="Authorize Client")).to_be_visible()
    page.get_by_placeholder("sub").fill(sub)
    if shots:
        page.screenshot(path=shots / "2-provider-login.png", full_page=True)
    page.get_by_role("button", name="Authorize", exact=True).click()


@pytest.mark.django_db(transaction=True)
def test_a_trainee_logs_in_through_oidc_and_runs_1a(
    live_portal, sync_loop, dev_profile, oidc_login, cluster_username, page: Page, shots
) -> None:
    sub = oidc_login.add_user(
        preferred_username=cluster_username, given_name="Ada", family_name="Lovelace"
    )

    through_the_provider(page, live_portal, sub, shots)

    # Back on the lab they asked for, as their cluster account.
    expect(page.get_by_role("heading", name=re.compile("^Storage lab"))).to_be_visible()
    expect(page.locator(".who")).to_have_text(cluster_username)
    page.screenshot(path=shots / "3-landed-on-the-lab.png", full_page=True)

    page.get_by_role("link", name=re.compile(r"^1a · ")).click()
    scratch = dev_profile.targets.get(key="scratch")
    page.get_by_label(scratch.name).check()
    page.get_by_role("button", name="Start runs").click()
    panel = page.locator("#runs-panel")
    expect(panel.locator(".status.completed")).to_have_count(1, timeout=60_000)
    expect(panel.locator("tbody tr[data-run] td.num").first).to_have_text(re.compile(r"^\d"))
    page.screenshot(path=shots / "4-1a-completed.png", full_page=True)
    assert BenchmarkRun.objects.get(user__username=cluster_username).cluster_username == (
        cluster_username
    )

    page.goto(f"{live_portal}/")
    expect(page.get_by_role("heading", name="Welcome, Ada Lovelace")).to_be_visible()
    expect(page.locator("code.account")).to_have_text(cluster_username)


@pytest.mark.django_db(transaction=True)
def test_a_user_without_a_cluster_account_gets_a_clear_page(
    live_server, oidc_login, page: Page, shots
) -> None:
    name = unique_name("nosuch")
    sub = oidc_login.add_user(preferred_username=name, email="bob@example.org")

    through_the_provider(page, live_server.url, sub)

    expect(page.get_by_role("heading", name="You cannot use Storage Lab yet")).to_be_visible()
    expect(page.get_by_role("alert")).to_contain_text(f"{name} is not an account of this system")
    expect(page.get_by_text("Ask the HPC support team")).to_be_visible()
    page.screenshot(path=shots / "5-no-cluster-account.png", full_page=True)
    page.goto(f"{live_server.url}/")
    expect(page.get_by_role("heading", name="Log in", exact=True)).to_be_visible()


@pytest.fixture
def front_end_portal(remote_user_login, settings) -> Iterator[str]:
    """The portal as a site behind a reverse proxy serves it: LOGIN_METHOD=remote_user,
    REMOTE_USER_HEADER=HTTP_X_REMOTE_USER (a server of its own, started with these)."""
    settings.REMOTE_USER_HEADER = "HTTP_X_REMOTE_USER"
    # The front end is on this machine: the browser's requests come from loopback.
    settings.REMOTE_USER_PROXIES = [ipaddress.ip_network("127.0.0.1/32")]
    server = LiveServer("127.0.0.1:0")
    yield server.url
    server.stop()


@pytest.mark.django_db(transaction=True)
def test_behind_a_front_end_the_trainee_is_simply_in(
    front_end_portal, dev_profile, cluster_username, page: Page, shots
) -> None:
    # What the proxy adds to every request once it has authenticated the person.
    page.set_extra_http_headers({"X-Remote-User": cluster_username})

    page.goto(f"{front_end_portal}/lab/")

    expect(page.get_by_role("heading", name=re.compile("^Storage lab"))).to_be_visible()
    expect(page.locator(".who")).to_have_text(cluster_username)
    page.goto(f"{front_end_portal}/")
    expect(page.locator("code.account")).to_have_text(cluster_username)
    page.screenshot(path=shots / "6-remote-user-home.png", full_page=True)

    page.set_extra_http_headers({"X-Remote-User": "root"})
    page.goto(f"{front_end_portal}/lab/")
    expect(page.get_by_role("alert")).to_contain_text("Jobs never run as root.")
    page.screenshot(path=shots / "7-remote-user-root.png", full_page=True)
