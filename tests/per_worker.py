"""Services of its own for each pytest-xdist worker (``-n``), so workers never share state.

pytest-django already gives each worker its own test database (``test_<name>_gw0``, …; the
in-memory SQLite of the embedded default is per process anyway), and the live server and daphne
listen on ports the system picks. What the environment names is shared, so each worker's copy is
rewritten here, before pytest-django reads the settings (this module is loaded with
``-p tests.per_worker`` from pyproject's addopts):

* ``CELERY_BROKER_URL``, ``CHANNEL_LAYER_URL``, ``REDIS_URL`` and ``CACHE_URL`` on Redis: the
  worker's own Redis database (the URL's number plus the worker's, modulo 16), since a test
  that clears a Redis cache empties its whole database;
* ``SCOPA_TEST_BROKER_URL``: the worker's own RabbitMQ vhost (``<vhost>_gw0``, …), which the
  pipeline tests create, purge and delete;
* ``SCOPA_TEST_REDIS_PORT``: the port of the pipeline tests' private ``redis-server``, one
  port further per worker.

Without xdist (or on worker ``gw0`` of the Redis and port numbers) nothing changes.
"""

import os
from urllib.parse import urlsplit, urlunsplit

WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
INDEX = int(WORKER[2:]) if WORKER.startswith("gw") and WORKER[2:].isdigit() else 0
REDIS_DATABASES = 16  # redis-server's default `databases`


def redis_url_for_worker(url, index):
    """The same Redis URL on database (its number + ``index``) modulo 16."""
    parts = urlsplit(url)
    number = parts.path.strip("/") or "0"
    if not number.isdigit():
        return url
    return urlunsplit(parts._replace(path=f"/{(int(number) + index) % REDIS_DATABASES}"))


def amqp_url_for_worker(url, worker):
    """The same AMQP URL on the vhost ``<vhost>_<worker>``."""
    parts = urlsplit(url)
    vhost = parts.path[1:] or "scopa_test"
    return urlunsplit(parts._replace(path=f"/{vhost}_{worker}"))


def _isolate(environ, worker, index):
    for name in ("CELERY_BROKER_URL", "CHANNEL_LAYER_URL", "REDIS_URL", "CACHE_URL"):
        url = environ.get(name, "")
        if url.startswith(("redis://", "rediss://")):
            environ[name] = redis_url_for_worker(url, index)
    amqp = environ.get("SCOPA_TEST_BROKER_URL", "")
    if amqp.startswith(("amqp://", "amqps://", "pyamqp://")):
        environ["SCOPA_TEST_BROKER_URL"] = amqp_url_for_worker(amqp, worker)
    port = int(environ.get("SCOPA_TEST_REDIS_PORT", "6390"))
    environ["SCOPA_TEST_REDIS_PORT"] = str(port + index)


if WORKER:
    _isolate(os.environ, WORKER, INDEX)
