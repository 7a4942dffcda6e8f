"""Prints the OIDC_* lines of a site's environment file from an OpenID provider's
discovery document (ISSUER/.well-known/openid-configuration), e.g. for Keycloak
`oidc_endpoints https://login.example.org/realms/hpc`."""

import requests
from django.core.management.base import BaseCommand, CommandError, CommandParser

# Our setting: the discovery document's field.
ENDPOINTS = {
    "OIDC_OP_AUTHORIZATION_ENDPOINT": "authorization_endpoint",
    "OIDC_OP_TOKEN_ENDPOINT": "token_endpoint",
    "OIDC_OP_USER_ENDPOINT": "userinfo_endpoint",
    "OIDC_OP_JWKS_ENDPOINT": "jwks_uri",
    "OIDC_OP_LOGOUT_ENDPOINT": "end_session_endpoint",
}
PREFERRED_ALGORITHMS = ("RS256", "ES256")


class Command(BaseCommand):
    help = "Print the OIDC_OP_* settings of an OpenID provider, from its discovery document."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("issuer", help="the provider's issuer URL")

    def handle(self, *args: object, issuer: str, **options: object) -> None:
        url = issuer.rstrip("/") + "/.well-known/openid-configuration"
        try:
            response = requests.get(url, timeout=10)
            response.raise_for_status()
            config = response.json()
        except (requests.RequestException, ValueError) as e:
            raise CommandError(f"cannot read {url}: {e}") from None
        if not isinstance(config, dict) or "authorization_endpoint" not in config:
            raise CommandError(f"{url} is not an OpenID Connect discovery document")
        for setting, field in ENDPOINTS.items():
            if config.get(field):
                self.stdout.write(f"{setting}={config[field]}")
        offered = config.get("id_token_signing_alg_values_supported") or []
        algorithm = next((a for a in PREFERRED_ALGORITHMS if a in offered), None)
        if algorithm:
            self.stdout.write(f"OIDC_RP_SIGN_ALGO={algorithm}")
        elif offered:
            self.stderr.write(f"# the provider signs ID tokens with {', '.join(offered)}")
