"""E-mail a user once each time their storage crosses a line (STORAGE_NOTICES): a target
that fills within 7 days at the recent pace, or files the purge takes within 3 days,
as the banner says them (status.alerts_for). A line stays crossed (StorageNotice) until
it is not; the next crossing mails again. Checked after each scan's answer and hourly."""

import logging

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.mail import send_mail
from django.db import IntegrityError
from django.urls import reverse
from django.utils import timezone

from exercises.quotas.models import StorageNotice
from exercises.quotas.status import Alert, alerts_for

log = logging.getLogger(__name__)


def line_of(alert: Alert) -> str:
    if alert.purge:
        return f"purge:{alert.target_name}"
    if alert.fills_in:
        return f"fills:{alert.target_name}:{alert.what}"
    return ""  # past 80 %: the banner says it, no mail


def sentence(alert: Alert) -> str:
    if alert.purge:
        return (
            f"The purge removes {alert.purge} ({alert.amount}) of yours from "
            f"{alert.target_name} within 3 days."
        )
    what = " (its file count)" if alert.what == "files" else ""
    return f"{alert.target_name}{what} fills {alert.fills_in}: {alert.amount} used."


def check(user: AbstractBaseUser) -> int:
    """Records the lines the user's storage crosses now, forgets those it no longer
    does, and mails each new one (when STORAGE_NOTICES and the user has an address).
    Returns how many were mailed."""
    if not settings.STORAGE_NOTICES:
        return 0
    crossed = {line_of(a): a for a in alerts_for(user) if line_of(a)}
    StorageNotice.objects.filter(user=user).exclude(line__in=crossed).delete()
    mailed = 0
    for line, alert in crossed.items():
        try:
            notice, _ = StorageNotice.objects.get_or_create(
                user=user, line=line, defaults={"crossed_at": timezone.now()}
            )
        except IntegrityError:
            continue  # another check recorded it at the same moment: that one mails
        # Claimed before sending: two checks at once never mail twice. A mail that
        # fails is claimed back, and the next check tries again.
        if notice.mailed or not user.email:
            continue
        if not StorageNotice.objects.filter(pk=notice.pk, mailed=False).update(mailed=True):
            continue
        if _mail(user, alert):
            mailed += 1
        else:
            StorageNotice.objects.filter(pk=notice.pk).update(mailed=False)
    return mailed


def _mail(user: AbstractBaseUser, alert: Alert) -> bool:
    link = settings.PORTAL_URL.rstrip("/") + reverse("quotas:my-storage")
    body = (
        f"{sentence(alert)}\n\n"
        f"My storage shows what fills your space, what the purge takes and where the "
        f"data could go instead:\n{link}\n\n"
        "You get this once each time it happens; nothing more until it is over and "
        "happens again."
    )
    try:
        send_mail(f"Storage Lab: {sentence(alert)}", body, None, [user.email])
    except Exception:  # a mail server away: the next check tries again
        log.exception("storage notice to user %s could not be sent", user.pk)
        return False
    return True


def check_everyone() -> int:
    """The hourly round: every user with a cluster account and an e-mail address."""
    users = get_user_model().objects.filter(cluster_account__isnull=False).exclude(email="")
    return sum(check(user) for user in users.iterator())
