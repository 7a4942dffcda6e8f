"""A process on one of the cluster's nodes (where every job runs) logs in to the portal
on the address the nodes reach it at, writing a new X-Forwarded-For each time: with the
site's default proxies (this machine's only) and a proxy count of 1, the throttle counts
the node's own address, and pauses it after five wrong passwords."""

import subprocess
from urllib.parse import urlsplit

import pytest
from axes.models import AccessAttempt

from tests.cluster24 import NODES

pytestmark = pytest.mark.django_db(transaction=True)

# Logs in as argv[2] once per (password, forged address) pair that follows, each time
# with a fresh form and its CSRF token, and prints each answer's HTTP status.
LOG_IN = """
import http.cookiejar, re, sys, urllib.error, urllib.parse, urllib.request
url, username, tries = sys.argv[1], sys.argv[2], sys.argv[3:]
web = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
for password, forged in zip(tries[::2], tries[1::2]):
    form = web.open(url + "/login/", timeout=30).read().decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form)[1]
    body = {"csrfmiddlewaretoken": token, "username": username, "password": password}
    request = urllib.request.Request(url + "/login/", urllib.parse.urlencode(body).encode(),
                                     headers={"X-Forwarded-For": forged})
    try:
        print(web.open(request, timeout=30).status)
    except urllib.error.HTTPError as e:
        print(e.code)
"""


def node_address(node: str) -> str:
    return subprocess.run(
        ["docker", "inspect", "-f",
         '{{(index .NetworkSettings.Networks "storagelab-cluster").IPAddress}}', node],
        capture_output=True, text=True, check=True, timeout=30,
    ).stdout.strip()  # fmt: skip


def test_a_node_that_forges_its_address_is_counted_by_its_own(
    portal_for_nodes, make_user, settings
) -> None:
    settings.TRUSTED_PROXY_COUNT = 1  # as site.env.example sets it
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, urlsplit(portal_for_nodes).hostname]
    ada = make_user(password="Ada-pass-1")
    node = NODES[0]
    tries = [word for i in range(5) for word in ("guess", f"203.0.113.{i}")]
    tries += ["Ada-pass-1", "203.0.113.99"]  # the sixth: her right password, yet paused

    done = subprocess.run(
        ["docker", "exec", node, "python3", "-I", "-c", LOG_IN, portal_for_nodes,
         ada.username, *tries],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["200"] * 4 + ["429", "429"]
    counted = set(AccessAttempt.objects.filter(username=ada.username).values_list("ip_address"))
    assert counted == {(node_address(node),)}
