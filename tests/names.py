"""Names of their own for each test: tests share one dev cluster."""

import secrets


def unique_name(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(4)}"
