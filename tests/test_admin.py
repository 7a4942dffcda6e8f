"""The admin, as staff use it to find things: every model of ours has a list that
opens, names the site profile where a database holds several, and shows sizes in the
units people read."""

import io
import re

import pytest
from django.apps import apps
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from portal.units import GiB
from tests.quotas import fill

pytestmark = pytest.mark.django_db

OURS = ("portal", "jobs", "catalogue", "quotas", "courses", "calibration", "jobio")


@pytest.fixture
def staff(client: Client, make_user) -> Client:
    client.force_login(make_user(superuser=True))
    return client


def test_every_model_of_ours_has_a_list_in_the_admin_that_opens(staff, dev_profile) -> None:
    models = [m for m in apps.get_models() if m._meta.app_label in OURS]
    missing, broken = [], []
    for model in models:
        name = f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist"
        try:
            url = reverse(name)
        except Exception:
            missing.append(name)
            continue
        if staff.get(url).status_code != 200:
            broken.append(url)
    # OIDC identities are pinned at a first sign-on and never edited by hand; a run's
    # result is read on its run.
    assert sorted(missing) == [
        "admin:jobs_runresult_changelist",
        "admin:portal_oidcidentity_changelist",
    ]
    assert broken == []


def test_the_targets_of_two_profiles_are_told_apart(staff, dev_profile) -> None:
    call_command("load_site_profile", "vsc3", stdout=io.StringIO())

    page = staff.get("/admin/catalogue/storagetarget/").content.decode()
    homes = re.findall(r'<th class="field-name"><a [^>]*>\$HOME</a></th>(.*?)</tr>', page, re.S)

    profiles = {re.search(r"field-profile[^>]*>([^<]*)<", row)[1] for row in homes}
    assert len(homes) == 2 and len(profiles) == 2, profiles


def test_quotas_are_shown_in_gib_not_bytes(staff, ada_account) -> None:
    fill(ada_account, "scratch", 3 * GiB, bytes_hard=10 * GiB)

    page = staff.get("/admin/quotas/quota/").content.decode()

    assert '<td class="field-used">3 GiB</td>' in page
    assert '<td class="field-hard">10 GiB</td>' in page
    assert str(3 * GiB) not in page
