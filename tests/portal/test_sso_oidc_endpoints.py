"""`manage.py oidc_endpoints ISSUER` writes a site's OIDC_* lines from the provider's
discovery document."""

import io

import pytest
from django.core.management import CommandError, call_command


def test_oidc_endpoints_prints_a_providers_settings(oidc_provider) -> None:
    out = io.StringIO()

    call_command("oidc_endpoints", oidc_provider.url + "/", stdout=out)

    assert out.getvalue().splitlines() == [
        f"OIDC_OP_AUTHORIZATION_ENDPOINT={oidc_provider.url}/oauth2/authorize",
        f"OIDC_OP_TOKEN_ENDPOINT={oidc_provider.url}/oauth2/token",
        f"OIDC_OP_USER_ENDPOINT={oidc_provider.url}/userinfo",
        f"OIDC_OP_JWKS_ENDPOINT={oidc_provider.url}/jwks",
        f"OIDC_OP_LOGOUT_ENDPOINT={oidc_provider.url}/oauth2/end_session",
        "OIDC_RP_SIGN_ALGO=RS256",
    ]
    with pytest.raises(CommandError, match="cannot read http://127.0.0.1:9/"):
        call_command("oidc_endpoints", "http://127.0.0.1:9")
