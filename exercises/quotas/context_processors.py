from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from exercises.quotas.status import cached_alerts_for


def quota_alerts(request: HttpRequest) -> dict:
    """The banner's targets past 80% full. Lazy: only pages that show the banner (full
    pages, not HTMX fragments) look them up, in the cache first."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {"quota_alerts": SimpleLazyObject(lambda: cached_alerts_for(user))}
