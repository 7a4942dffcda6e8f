"""Redis, the broker and the cache, answers only with its password: whoever can write
to the broker has the workers run tasks, and Django's Redis cache unpickles what it
reads. The portal's URL carries the password (REDIS_PASSWORD_FILE), nothing else does."""

import pytest
import redis
from django.conf import settings

from portal.settings import with_password


def test_the_dev_redis_refuses_a_client_without_the_password() -> None:
    host_port_db = settings.REDIS_URL.rpartition("@")[2]
    assert settings.REDIS_PASSWORD and "@" in settings.REDIS_URL

    with pytest.raises(redis.AuthenticationError):
        redis.Redis.from_url(f"redis://{host_port_db}", socket_timeout=5).ping()
    assert redis.Redis.from_url(settings.REDIS_URL, socket_timeout=5).ping()


def test_the_password_goes_into_the_url_escaped_and_only_once() -> None:
    assert with_password("redis://r:6379/0", "a/b@c") == "redis://:a%2Fb%40c@r:6379/0"
    assert with_password("redis://:own@r:6379/0", "x") == "redis://:own@r:6379/0"
    assert with_password("redis://r:6379/0", "") == "redis://r:6379/0"
