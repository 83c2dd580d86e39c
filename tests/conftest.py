"""Shared fixtures. App-specific fixtures live in each test package's own conftest; the push
fixtures (a channel layer, eager Celery, a real daphne) serve tests/live and tests/browser."""

import contextlib
import os
import uuid

import pytest
from channels.layers import channel_layers
from django.test.utils import override_settings
from django.utils import translation


def _redis_url():
    # CI and the helpers' checkouts give the channel layer its own Redis database.
    for name in ("CHANNEL_LAYER_URL", "REDIS_URL", "CELERY_BROKER_URL"):
        url = os.environ.get(name, "")
        if url.startswith(("redis://", "rediss://")):
            return url
    return ""


@pytest.fixture(scope="session", autouse=True)
def _fast_password_hasher():
    """Every test user's password is hashed with MD5: the production hasher (PBKDF2, a million
    rounds) costs about 0.3 s of CPU for each user created and each password login, and no test
    is about the hash. Processes a test starts afresh (manage.py, celery workers) keep the
    settings' hashers; a forked daphne inherits this one."""
    with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]):
        yield


@pytest.fixture(autouse=True)
def _default_language():
    """Each test starts in the site's language: a request through the test client leaves the
    language its LocaleMiddleware chose active in the thread, which made a later test's
    Italian message English depending on which tests ran before it on the same worker."""
    translation.deactivate()
    yield
    translation.deactivate()


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Each test starts with an empty cache. Throttle counters are keyed by user id, which
    SQLite hands out again after a rollback: one test's requests counted against the next."""
    from django.core.cache import caches

    for cache in caches.all(initialized_only=True):
        cache.clear()


@pytest.fixture
def channel_layer(settings):
    url = _redis_url()
    host = {**settings.CHANNEL_LAYER_HOST, "address": url}  # the settings' connection options
    settings.CHANNEL_LAYERS = {
        "default": (
            {
                "BACKEND": "channels_redis.core.RedisChannelLayer",
                "CONFIG": {"hosts": [host], "prefix": f"scopa-test-{uuid.uuid4().hex[:8]}"},
            }
            if url
            else {"BACKEND": "channels.layers.InMemoryChannelLayer"}
        )
    }
    channel_layers.backends.clear()
    yield settings.CHANNEL_LAYERS["default"]["BACKEND"]
    channel_layers.backends.clear()


@pytest.fixture
def eager_celery():
    """Tasks run in-process even when the environment configures a broker (push, webhooks and
    ratings tests ask for it by name)."""
    from config.celery import app as celery_app

    saved = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = saved


@contextlib.contextmanager
def database_as_found(django_db_blocker):
    """Put back, when the block ends, the rows the test database held when it began (the
    migrations' VP tables, the ratings' lock row and such) that transactional tests flushed.

    pytest-django runs transactional tests after the others, so in one process nothing after
    them needs those rows; an xdist worker may run a group of them first (the pipeline's) and
    then any test. The browser and pipeline modules wrap themselves in this."""
    from django.core import serializers
    from django.db import connection

    with django_db_blocker.unblock():
        saved = connection.creation.serialize_db_to_string()
    yield
    with django_db_blocker.unblock():
        for item in serializers.deserialize("json", saved):
            model = type(item.object)
            if model._meta.label in ("contenttypes.ContentType", "auth.Permission"):
                continue  # the flush's post_migrate signal recreated them
            if not model._default_manager.filter(pk=item.object.pk).exists():
                item.save()


def require_shared_database():
    """Skip a test whose rows, written after ``daphne_server`` forked, must be read by that
    server: an in-memory SQLite database (the tests' default without ``DATABASE_URL``) stays
    behind in the parent process; PostgreSQL (CI) is shared."""
    from django.db import connection

    if connection.vendor == "sqlite" and connection.is_in_memory_db():
        pytest.skip("the forked daphne cannot read an in-memory SQLite database: set DATABASE_URL")


def _serve_push(port: int) -> None:
    """A forked push process: uvicorn with the options ``python -m config.push`` gives it."""
    import uvicorn

    from config.asgi import application
    from config.push import options

    uvicorn.Server(uvicorn.Config(application, **options("127.0.0.1", port, proxied=False))).run()


@pytest.fixture
def push_server(channel_layer, eager_celery):
    """The project's ASGI application served as a site serves its push (``config.push``:
    uvicorn), forked like ``daphne_server`` so that it shares this test's settings."""
    import multiprocessing
    import socket
    import time

    from django.db import connections

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    connections.close_all()  # the fork must not share this process's database sockets
    server = multiprocessing.get_context("fork").Process(target=_serve_push, args=(port,))
    server.start()
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the push process did not start"
                time.sleep(0.05)
        yield f"127.0.0.1:{port}"
    finally:
        server.terminate()
        server.join(5)
        if server.is_alive():
            server.kill()
            server.join()


@pytest.fixture
def daphne_server(channel_layer, eager_celery):
    """The project's ASGI application served by a real daphne in a forked process (channels'
    own live-server way), sharing this test's database and channel layer settings."""
    from daphne.testing import DaphneProcess
    from django.db import connections

    from config.asgi import application

    connections.close_all()  # the fork must not share this process's database sockets
    server = DaphneProcess("127.0.0.1", lambda: application)
    server.start()
    try:
        assert server.ready.wait(10), "daphne did not start"
        yield f"127.0.0.1:{server.port.value}"
    finally:
        server.terminate()
        server.join(5)
