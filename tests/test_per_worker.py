"""Each xdist worker's copy of the environment names services of its own (tests/per_worker.py)."""

from tests.per_worker import _isolate, amqp_url_for_worker, redis_url_for_worker


def test_a_worker_gets_the_next_redis_database_wrapping_at_16():
    assert redis_url_for_worker("redis://127.0.0.1:6379/13", 1) == "redis://127.0.0.1:6379/14"
    assert redis_url_for_worker("redis://127.0.0.1:6379/15", 2) == "redis://127.0.0.1:6379/1"
    assert redis_url_for_worker("redis://127.0.0.1:6379", 1) == "redis://127.0.0.1:6379/1"
    assert redis_url_for_worker("redis://:pw@h:1/0", 0) == "redis://:pw@h:1/0"


def test_a_worker_gets_a_vhost_of_its_own():
    url = "amqp://guest:guest@127.0.0.1:5672/scopa_ci"
    assert amqp_url_for_worker(url, "gw1") == "amqp://guest:guest@127.0.0.1:5672/scopa_ci_gw1"


def test_the_environment_of_a_worker_is_rewritten_and_other_names_left_alone():
    environ = {
        "CELERY_BROKER_URL": "redis://127.0.0.1:6379/0",
        "CHANNEL_LAYER_URL": "redis://127.0.0.1:6379/4",
        "CACHE_URL": "locmemcache://scopa",
        "SCOPA_TEST_BROKER_URL": "amqp://guest:guest@127.0.0.1:5672/scopa_ci",
        "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/scopa",
    }
    _isolate(environ, "gw3", 3)
    assert environ == {
        "CELERY_BROKER_URL": "redis://127.0.0.1:6379/3",
        "CHANNEL_LAYER_URL": "redis://127.0.0.1:6379/7",
        "CACHE_URL": "locmemcache://scopa",
        "SCOPA_TEST_BROKER_URL": "amqp://guest:guest@127.0.0.1:5672/scopa_ci_gw3",
        # pytest-django names the worker's test database itself (test_scopa_gw3)
        "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/scopa",
        "SCOPA_TEST_REDIS_PORT": "6393",
    }
