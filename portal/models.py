from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models

from portal.accounts import validate_job_account

# POSIX-portable user names, as useradd accepts them: this is the only shape a
# cluster account name can take before it reaches a token or a job.
cluster_username_validator = RegexValidator(
    r"^[a-z_][a-z0-9_-]{0,31}\Z",
    "A cluster account name is 1-32 characters: lower-case letters, digits, '_' "
    "or '-', not starting with a digit or '-'.",
)


class ClusterAccount(models.Model):
    """The cluster (Unix) account a portal user's jobs run as."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="cluster_account"
    )
    username = models.CharField(
        max_length=32,
        unique=True,
        validators=[cluster_username_validator, validate_job_account],
        help_text="The user's own Unix account; never root or a system account",
    )
    # The lab form's click that started runs last (exercises/lab/start.py): the same click
    # sent twice (a double click, a resent form) starts nothing the second time.
    last_click = models.CharField(max_length=32, blank=True, editable=False)

    def __str__(self) -> str:
        return self.username


class OidcIdentity(models.Model):
    """Who a login is at the OpenID provider: its issuer and subject (the provider's
    own id of the person, never reassigned), pinned at the login's first sign-on and
    checked at every one after (portal/oidc.py). The name claim may be editable or
    reused at the provider; a person's (iss, sub) is not."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="oidc_identity"
    )
    issuer = models.CharField(max_length=255)
    subject = models.CharField(max_length=255)
    pinned_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["issuer", "subject"], name="one_login_per_oidc_identity"
            )
        ]

    def __str__(self) -> str:
        return f"{self.subject} at {self.issuer}"
