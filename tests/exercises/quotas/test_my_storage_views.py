"""The "My storage" page and the banner: bars per target with the 80% / 95% thresholds,
unknown figures shown as unknown, and only ever the logged-in user's own figures."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from exercises.quotas.store import record_failure, record_usage
from exercises.quotas.usage import Usage
from portal.units import GiB, MiB
from tests.quotas import dev_target, fill

pytestmark = pytest.mark.django_db


@pytest.fixture
def bob_account(dev_profile, make_user):
    return make_user("sl-bob").cluster_account


def test_it_asks_anonymous_visitors_to_log_in(client) -> None:
    response = client.get("/storage/")

    assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_it_shows_a_bar_per_target_with_figures_and_the_guidance_link(client, ada_account) -> None:
    fill(ada_account, "home", 100 * MiB, bytes_hard=GiB, files_used=12)
    fill(ada_account, "scratch", 2 * GiB, bytes_hard=10 * GiB, files_used=3)
    client.force_login(ada_account.user)

    page = client.get("/storage/").content.decode()

    assert page.count('role="meter"') == 2  # $HOME and $SCRATCH; files have no limit here
    assert "100 MiB of 1 GiB (10%)" in page and "2 GiB of 10 GiB (20%)" in page
    assert "12 files, no limit" in page
    assert '<a href="/storage/scratch/">Guidance for $SCRATCH' in page
    assert "/srv/storagelab/scratch/sl-ada" in page
    assert "each run&#x27;s directory is removed when its job ends" in page  # $TMPDIR's purge
    assert "Usage unknown, never collected." in page  # $GLOBAL and $TMPDIR: not yet


def test_bars_turn_amber_at_80_and_red_at_95_percent(client, ada_account) -> None:
    fill(ada_account, "home", int(0.79 * GiB), bytes_hard=GiB)
    fill(ada_account, "global", 8 * GiB, bytes_hard=10 * GiB)
    fill(ada_account, "scratch", int(9.6 * GiB), bytes_hard=10 * GiB)
    client.force_login(ada_account.user)

    page = client.get("/storage/").content.decode()

    assert 'class="bar level-ok" role="meter" aria-label="Space used on $HOME"' in page
    assert 'class="bar level-warning" role="meter" aria-label="Space used on $GLOBAL"' in page
    assert 'class="bar level-critical" role="meter" aria-label="Space used on $SCRATCH"' in page


def test_the_banner_appears_on_every_page_past_80_percent_for_that_user_only(
    client, ada_account, bob_account
) -> None:
    fill(ada_account, "scratch", int(7.5 * GiB), bytes_hard=10 * GiB)
    fill(bob_account, "scratch", 1 * GiB, bytes_hard=10 * GiB)
    client.force_login(ada_account.user)
    assert "quota-banner" not in client.get("/lab/").content.decode()  # 75%: no banner yet

    fill(ada_account, "scratch", int(8.5 * GiB), bytes_hard=10 * GiB)  # the next collection: 85%

    for url in ("/", "/lab/", "/advisor/", "/storage/"):
        page = client.get(url).content.decode()
        assert '<aside class="quota-banner level-warning"' in page, url
        assert "$SCRATCH is 85% full</strong>: 8.5 GiB of 10 GiB used." in page
    client.force_login(bob_account.user)
    assert "quota-banner" not in client.get("/lab/").content.decode()


def test_the_banner_is_red_past_95_percent_and_counts_files_too(client, ada_account) -> None:
    fill(ada_account, "home", MiB, bytes_hard=GiB, files_used=990, files_hard=1000)
    client.force_login(ada_account.user)

    page = client.get("/lab/").content.decode()

    assert '<aside class="quota-banner level-critical"' in page
    assert "$HOME is 99% full</strong> (files): 990 of 1,000 files used." in page


def test_htmx_fragments_do_not_pay_for_the_banner(client, ada_account) -> None:
    fill(ada_account, "scratch", int(8.5 * GiB), bytes_hard=10 * GiB)
    client.force_login(ada_account.user)

    with CaptureQueriesContext(connection) as queries:
        client.get("/lab/1a/", headers={"HX-Request": "true"})

    assert not [q for q in queries if "exercises_quota" in q["sql"]]


def test_another_users_figures_are_never_shown(client, ada_account, bob_account) -> None:
    fill(ada_account, "scratch", int(9.9 * GiB), bytes_hard=10 * GiB)
    client.force_login(bob_account.user)

    page = client.get("/storage/", {"user": "sl-ada", "account": ada_account.pk}).content.decode()

    assert "sl-ada" not in page and "9.9 GiB" not in page and "quota-banner" not in page
    assert "/srv/storagelab/scratch/sl-bob" in page


def test_a_failed_collection_shows_unknown_and_when_figures_were_last_good(
    client, ada_account
) -> None:
    fill(ada_account, "scratch", 3 * GiB, bytes_hard=10 * GiB)
    record_failure(ada_account, dev_target("scratch"), "lustre", "lfs is not installed on vm")
    record_failure(ada_account, dev_target("global"), "lustre", "lfs failed (exit status 2)")
    client.force_login(ada_account.user)

    page = client.get("/storage/").content.decode()

    collected = timezone.now().strftime("%Y-%m-%d")
    assert f"Usage unknown, last collected at {collected}" in page
    assert "failed: lfs is not installed on vm" in page
    assert "Usage unknown, never collected.</strong> The last try" in page
    assert "3 GiB" not in page and "0 B" not in page  # neither stale nor zero
    assert 'role="meter"' not in page


def test_over_the_soft_limit_it_says_how_much_grace_is_left(client, ada_account) -> None:
    ends = timezone.now() + timedelta(days=3, hours=2, minutes=30)
    fill(
        ada_account,
        "global",
        6 * GiB,
        bytes_soft=5 * GiB,
        bytes_hard=8 * GiB,
        bytes_grace_ends=ends,
    )
    client.force_login(ada_account.user)

    page = client.get("/storage/").content.decode()

    assert "6 GiB of 5 GiB (120%; hard limit 8 GiB)" in page
    assert "over the soft limit of 5 GiB (space): 3\xa0days, 2\xa0hours of grace left" in page


def test_a_user_without_cluster_account_is_told_why_there_is_nothing(
    client, dev_profile, make_user
) -> None:
    client.force_login(make_user())

    page = client.get("/storage/").content.decode()

    assert "no cluster account" in page and 'role="meter"' not in page


def test_the_page_stays_within_a_fixed_number_of_queries(
    client, ada_account, django_assert_max_num_queries
) -> None:
    for key in ("home", "global", "scratch", "tmp"):
        fill(ada_account, key, int(8.5 * GiB), bytes_hard=10 * GiB, files_used=5)
    client.force_login(ada_account.user)

    # 7, the history, the banner's forecast and purge, the storage scans, and one for every
    # target's weather
    with django_assert_max_num_queries(12):
        assert client.get("/storage/").status_code == 200


def test_it_says_in_plain_words_where_each_figure_comes_from(client, ada_account) -> None:
    fill(ada_account, "home", 100 * MiB, bytes_hard=GiB)
    record_usage(ada_account, dev_target("global"), "lustre", Usage(bytes_used=GiB))
    client.force_login(ada_account.user)

    page = client.get("/storage/").content.decode()

    assert (
        "ago): the portal adds up the files in your directory, and the limit is this "
        "site&#x27;s default quota, the same for every account." in page
    )
    assert "the filesystem&#x27;s own count for your account (Lustre: lfs quota)" in page
    assert "directory usage against the default quota" not in page  # the admin's words
