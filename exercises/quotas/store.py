"""Where collected figures go: one Quota row per account and target. A failure records
why and when, and leaves the last good figures (and their time) as they were."""

import logging
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from exercises.catalogue.models import StorageTarget
from exercises.quotas import history
from exercises.quotas.models import Quota
from exercises.quotas.status import forget_alerts
from exercises.quotas.usage import Usage
from portal.models import ClusterAccount

log = logging.getLogger(__name__)

ERROR_MAX_CHARS = 500


def record_usage(
    account: ClusterAccount,
    target: StorageTarget,
    collector: str,
    usage: Usage,
    collected_at: datetime | None = None,
) -> Quota | None:
    """Stores figures measured at `collected_at` (now by default). Figures older than the
    stored ones are ignored (None): a late or re-imported file never turns back the clock."""
    now = timezone.now()
    collected_at = collected_at or now
    with transaction.atomic():
        quota = Quota.objects.select_for_update().filter(account=account, target=target).first()
        if quota and quota.collected_at and quota.collected_at > collected_at:
            return None
        quota = quota or Quota(account=account, target=target)
        quota.collector = collector
        for name, value in vars(usage).items():
            setattr(quota, name, value)
        quota.collected_at = collected_at
        quota.attempted_at = now
        quota.error = ""
        quota.save()
        history.keep(quota)
    forget_alerts(account.user_id)
    return quota


def record_failure(
    account: ClusterAccount, target: StorageTarget, collector: str, error: str
) -> Quota:
    """Says why the figures are unknown now; the last good figures stay for the record."""
    error = error[:ERROR_MAX_CHARS] or "failed"
    quota, created = Quota.objects.get_or_create(
        account=account,
        target=target,
        defaults={"collector": collector, "attempted_at": timezone.now(), "error": error},
    )
    if not created:
        Quota.objects.filter(pk=quota.pk).update(attempted_at=timezone.now(), error=error)
        quota.refresh_from_db()
    forget_alerts(account.user_id)
    return quota


def record_unexpected(
    account: ClusterAccount, target: StorageTarget, collector: str, error: Exception
) -> None:
    """An error nobody planned for (a parser's bug, the database refusing a figure) costs
    this one figure, never the round: the traceback goes to the log, the page says
    unknown. Users see its type only: its text may be a database's or a bug's."""
    log.error(
        "quota of %s on %s unknown: the collection failed unexpectedly",
        account,
        target.key,
        exc_info=error,
    )
    reason = f"the collection failed unexpectedly ({type(error).__name__}); the worker log says why"
    try:
        record_failure(account, target, collector, reason)
    except Exception:  # the database itself, likely: the next account may fare better
        log.exception("quota of %s on %s: the failure could not be recorded", account, target.key)
