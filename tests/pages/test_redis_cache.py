"""The Redis cache backend (config.cache) on the real Redis: one client per pool, kept."""

import os

import pytest

from config.cache import RedisCache


@pytest.fixture
def redis_cache():
    url = os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0")
    if not url.startswith("redis://"):
        pytest.skip("no Redis configured")
    # the xdist worker's own Redis database (tests/per_worker.py), keys under a prefix of
    # their own; the next database would be another worker's, which its tests may flush
    backend = RedisCache(url, {"KEY_PREFIX": "test-config-cache"})
    yield backend
    backend.delete_many(["stamp", "answer"])


def test_the_client_is_made_once_and_the_cache_still_works(redis_cache):
    assert redis_cache._cache.get_client() is redis_cache._cache.get_client()
    redis_cache.set_many({"stamp": (1, "a"), "answer": b"\x1f\x8b"}, 30)
    assert redis_cache.get_many(["stamp", "answer", "none"]) == {
        "stamp": (1, "a"),
        "answer": b"\x1f\x8b",
    }
