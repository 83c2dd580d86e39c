"""Django's Redis cache, with its Redis client made once per connection pool.

Django's backend builds a new ``redis.Redis`` for every cache call (its response-callback table,
its locks): a third of what a page served from the cache cost. A ``redis.Redis`` over a pool is
safe to share between threads, so each pool gets one, kept.
"""

import logging

from django.core.cache.backends import redis as django_redis

logger = logging.getLogger(__name__)


class RedisCacheClient(django_redis.RedisCacheClient):
    def get_client(self, key=None, *, write=False):
        pool = self._get_connection_pool(write)  # type: ignore[attr-defined]  # not in stubs
        clients = self.__dict__.setdefault("_clients_by_pool", {})
        client = clients.get(id(pool))
        if client is None:
            client = clients[id(pool)] = self._client(connection_pool=pool)  # type: ignore[attr-defined]
        return client


class RedisCache(django_redis.RedisCache):
    def __init__(self, server, params):
        super().__init__(server, params)
        self._class = RedisCacheClient
