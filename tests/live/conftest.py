"""Fixtures of the push tests: the channel layer (Redis when the environment has it), eager
Celery, and the project's ASGI application served by a real daphne."""

import os
import uuid

import pytest
from channels.layers import channel_layers

from config.asgi import application
from config.celery import app as celery_app


@pytest.fixture(autouse=True)
def _fast_passwords(settings):
    """The factories give every player a password; nothing here logs in with one."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _redis_url():
    # CI and the helpers' checkouts give the channel layer its own Redis database.
    for name in ("CHANNEL_LAYER_URL", "REDIS_URL", "CELERY_BROKER_URL"):
        url = os.environ.get(name, "")
        if url.startswith(("redis://", "rediss://")):
            return url
    return ""


@pytest.fixture
def channel_layer(settings):
    url = _redis_url()
    settings.CHANNEL_LAYERS = {
        "default": (
            {
                "BACKEND": "channels_redis.core.RedisChannelLayer",
                "CONFIG": {"hosts": [url], "prefix": f"scopa-test-{uuid.uuid4().hex[:8]}"},
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
    saved = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = saved


@pytest.fixture
def daphne_server(channel_layer, eager_celery):
    """The project's ASGI application served by a real daphne in a forked process (channels'
    own live-server way), sharing this test's database and channel layer settings."""
    from daphne.testing import DaphneProcess
    from django.db import connections

    connections.close_all()  # the fork must not share this process's database sockets
    server = DaphneProcess("127.0.0.1", lambda: application)
    server.start()
    try:
        assert server.ready.wait(10), "daphne did not start"
        yield f"127.0.0.1:{server.port.value}"
    finally:
        server.terminate()
        server.join(5)
