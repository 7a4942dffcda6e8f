"""Usage history (exercises/quotas/history.py): a collection kept at most once an hour,
thinned to a day's last once a week old, gone past QUOTA_HISTORY_DAYS; My storage draws
it and says when each target fills, and the banner says so a week ahead."""

from datetime import timedelta

import pytest
from django.utils import timezone

from exercises.quotas import history
from exercises.quotas.models import UsageSample
from exercises.quotas.store import record_usage
from exercises.quotas.usage import Usage
from portal.units import GiB
from tests.quotas import dev_target

pytestmark = pytest.mark.django_db


def collected(account, key: str, used: int, ago: timedelta, **limits) -> None:
    record_usage(
        account, dev_target(key), "local", Usage(bytes_used=used, **limits),
        collected_at=timezone.now() - ago,
    )  # fmt: skip


def test_a_collection_is_kept_at_most_once_an_hour(ada_account) -> None:
    for minutes in (130, 120, 70, 60, 50, 0):  # every collection of a few hours
        collected(ada_account, "scratch", GiB, timedelta(minutes=minutes))

    kept = UsageSample.objects.filter(account=ada_account).order_by("at")
    ages = [round((timezone.now() - s.at).total_seconds() / 60) for s in kept]
    assert ages == [130, 70, 0]


def test_old_samples_thin_to_a_day_and_go_past_the_retention(ada_account, settings) -> None:
    settings.QUOTA_HISTORY_DAYS = 30
    for hours in (0, 5, 10, 24 * 10 + 1, 24 * 10 + 3, 24 * 10 + 5, 24 * 40):
        UsageSample.objects.create(
            account=ada_account, target=dev_target("scratch"), bytes_used=hours,
            at=timezone.now().replace(hour=20) - timedelta(hours=hours),
        )  # fmt: skip

    history.thin()

    left = sorted(UsageSample.objects.values_list("bytes_used", flat=True))
    # This week's stay; of day 10 only its last (the latest reading, 241 h ago); day 40 goes.
    assert left == [0, 5, 10, 241]


def test_my_storage_says_when_a_growing_target_fills_and_the_banner_a_week_ahead(
    client, ada_account
) -> None:
    for day in range(5, -1, -1):  # 1 GiB a day: 4 GiB five days ago, 9 GiB now
        collected(ada_account, "scratch", (9 - day) * GiB, timedelta(days=day), bytes_hard=12 * GiB)
    for day in (5, 2, 0):  # flat
        collected(ada_account, "global", 3 * GiB, timedelta(days=day), bytes_hard=12 * GiB)
    client.force_login(ada_account.user)

    page = client.get("/storage/").content.decode()

    fills_on = timezone.localtime(timezone.now() + timedelta(days=3))
    assert f"Space fills in about 3 days, around {fills_on:%-d %B}, at your pace" in page
    assert "(+1 GiB a day)" in page
    assert "has not grown over the last 14 days" in page  # $GLOBAL: flat, said why
    assert 'id="scratch-history"' in page  # the chart's data
    banner = client.get("/lab/").content.decode()
    assert f"$SCRATCH fills in about 3 days, around {fills_on:%-d %B}</strong>" in banner
