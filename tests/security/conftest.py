import pytest
from django.core.cache import cache

from config.celery import app as celery_app


@pytest.fixture(autouse=True)
def eager_celery():
    """Record submissions verify in-process here, whatever broker the environment names."""
    saved = celery_app.conf.task_always_eager, celery_app.conf.task_eager_propagates
    celery_app.conf.task_always_eager = True
    celery_app.conf.task_eager_propagates = True
    yield
    celery_app.conf.task_always_eager, celery_app.conf.task_eager_propagates = saved


@pytest.fixture(autouse=True)
def fresh_throttles():
    """Throttle counters live in the cache: every test starts with none."""
    cache.clear()
    yield
    cache.clear()
