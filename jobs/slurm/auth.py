"""Tokens for slurmrestd.

By default the portal signs a short-lived HS256 JWT per cluster user with the
cluster's JWT key, exactly what `scontrol token` would mint. A site that does not
hand the key to the portal configures one static token of a user allowed to act
for others (SlurmUser or root); requests then name the user in the header only.
Tokens are secrets: never log them, never put them in an exception message.
"""

import time
from pathlib import Path
from threading import Lock
from typing import Protocol

import jwt

from jobs.slurm.errors import SlurmAuthError

# A signed token is kept in the process and reused until this many seconds before it
# expires.
RENEW_BEFORE = 60


class Auth(Protocol):
    def headers(self, user: str) -> dict[str, str]:
        """The headers that authenticate a request as cluster user `user`."""
        ...


class TokenSigner:
    def __init__(self, key_file: str, lifespan: int):
        self.key_file = key_file
        self.lifespan = max(lifespan, RENEW_BEFORE * 2)
        self._cache: dict[str, tuple[str, float]] = {}
        self._lock = Lock()

    def _key(self) -> bytes:
        try:
            return Path(self.key_file).read_bytes()
        except OSError as e:
            raise SlurmAuthError(f"cannot read the Slurm JWT key {self.key_file}: {e.strerror}")

    def token(self, user: str) -> str:
        now = time.time()
        with self._lock:
            cached = self._cache.get(user)
            if cached and cached[1] - RENEW_BEFORE > now:
                return cached[0]
            expires = int(now) + self.lifespan
            claims = {"iat": int(now), "exp": expires, "sun": user}
            token = jwt.encode(claims, self._key(), algorithm="HS256")
            self._cache[user] = (token, expires)
            return token

    def headers(self, user: str) -> dict[str, str]:
        return {"X-SLURM-USER-NAME": user, "X-SLURM-USER-TOKEN": self.token(user)}


class StaticToken:
    def __init__(self, token: str):
        self._token = token

    def headers(self, user: str) -> dict[str, str]:
        return {"X-SLURM-USER-NAME": user, "X-SLURM-USER-TOKEN": self._token}
