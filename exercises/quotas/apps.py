from django.apps import AppConfig


class QuotasConfig(AppConfig):
    """How full each cluster account is on each storage target, and the rounds that collect it."""

    name = "exercises.quotas"
    label = "quotas"
    verbose_name = "Quotas"
