"""Quota figures of the dev site's targets, stored as a collector would store them."""

from exercises.models import StorageTarget
from exercises.quota.store import record_usage
from exercises.quota.usage import Usage
from portal.models import ClusterAccount


def dev_target(key: str) -> StorageTarget:
    return StorageTarget.objects.get(profile__name="dev", key=key)


def fill(account: ClusterAccount, key: str, used: int, **limits: int) -> None:
    """The account's figures on a dev target, as the local collector stores them."""
    record_usage(account, dev_target(key), "local", Usage(bytes_used=used, **limits))
