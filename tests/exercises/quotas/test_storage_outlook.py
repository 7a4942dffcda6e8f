"""manage.py storage_outlook: per target, the usage against the limit and when it fills
at the recent pace, or why there is no forecast; for support staff."""

import json
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from exercises.quotas.store import record_usage
from exercises.quotas.usage import Usage
from portal.units import GiB
from tests.quotas import dev_target

pytestmark = pytest.mark.django_db


def outlook(user) -> dict:
    out = StringIO()
    call_command("storage_outlook", "--user", user.username, "--json", stdout=out)
    return {row["target"]: row for row in json.loads(out.getvalue())["targets"]}


def test_a_growing_target_gets_its_days_a_flat_one_why_and_an_unknown_one_says_so(
    ada_account,
) -> None:
    for day in range(5, -1, -1):  # $SCRATCH: 1 GiB a day; $GLOBAL: flat
        at = timezone.now() - timedelta(days=day)
        for key, used in (("scratch", (9 - day) * GiB), ("global", 3 * GiB)):
            usage = Usage(bytes_used=used, bytes_hard=12 * GiB)
            record_usage(ada_account, dev_target(key), "local", usage, collected_at=at)

    rows = outlook(ada_account.user)

    scratch = rows["scratch"]
    assert (scratch["used_bytes"], scratch["quota_bytes"]) == (9 * GiB, 12 * GiB)
    assert scratch["days_to_full"] == pytest.approx(3.0, abs=0.1)
    assert scratch["says"].startswith("Space fills in about 3 days")
    assert rows["global"]["days_to_full"] is None
    assert "has not grown over the last 14 days" in rows["global"]["why"]
    assert rows["home"]["used_bytes"] is None
    assert rows["home"]["why"] == "usage unknown: never collected"


def test_a_login_without_an_account_or_no_login_at_all_is_named(make_user, dev_profile) -> None:
    with pytest.raises(CommandError, match="nobody-here: no such portal login"):
        call_command("storage_outlook", "--user", "nobody-here")
    lonely = make_user()
    with pytest.raises(CommandError, match="has no cluster account"):
        call_command("storage_outlook", "--user", lonely.username)
