"""The project boots on whatever database the environment names, with both languages."""

import os

import pytest
from django.conf import settings
from django.core.management import call_command


def test_languages_are_italian_first_then_english():
    assert settings.LANGUAGE_CODE == "it"
    assert [code for code, _ in settings.LANGUAGES] == ["it", "en"]


@pytest.mark.django_db
def test_no_missing_migrations():
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)


def test_celery_is_eager_only_without_a_broker():
    assert (not os.environ.get("CELERY_BROKER_URL")) == settings.CELERY_TASK_ALWAYS_EAGER


def test_a_dead_pool_process_gives_its_message_back_within_a_second_or_two():
    """No result backend: Celery's default 10 s wait for a dead pool process's result only kept
    the slot idle (a poison record held one for 10 s a delivery)."""
    from config.celery import app

    assert app.conf.task_reject_on_worker_lost and app.conf.task_acks_late
    assert app.conf.worker_lost_wait <= 2


def test_a_worker_process_leaves_what_it_started_with_out_of_garbage_collection():
    """Full collections walked the whole imported project each time (0.1 s, docs/performance.md):
    a pool process freezes its objects when it starts, a worker without a pool when ready."""
    import gc

    from celery import signals

    from config.celery import freeze_what_the_worker_started_with as freeze

    for signal in (signals.worker_process_init, signals.worker_ready):
        assert freeze in [receiver() for _key, receiver in signal.receivers]
    gc.unfreeze()
    try:
        signals.worker_process_init.send(sender=None)
        assert gc.get_freeze_count() > 10_000
    finally:
        gc.unfreeze()


@pytest.mark.django_db
def test_no_index_is_the_leading_part_of_another():
    """An index whose columns lead another index of its table answers no query the other does
    not, and costs a write on every row. Django gives every foreign key one of its own, also
    where a unique constraint on (that key, …) exists: such fields say ``db_index=False``."""
    import sys
    from pathlib import Path

    from django.apps import apps
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("reads PostgreSQL's catalogue")
    ours = {
        model._meta.db_table
        for app in apps.get_app_configs()
        if Path(app.path).is_relative_to(settings.BASE_DIR)
        and not Path(app.path).is_relative_to(sys.prefix)  # a virtualenv inside the project
        for model in app.get_models()
    }
    assert "tournaments_matchresult" in ours
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT t.relname, i.relname, x.indkey::int2[], x.indpred IS NOT NULL
            FROM pg_index x
            JOIN pg_class i ON i.oid = x.indexrelid
            JOIN pg_class t ON t.oid = x.indrelid
            JOIN pg_namespace n ON n.oid = t.relnamespace
            WHERE n.nspname = 'public' AND x.indexprs IS NULL
            """
        )
        indexes = cursor.fetchall()
    led = sorted(
        (table, name, other)
        for table, name, keys, partial in indexes
        if table in ours and not partial
        for other_table, other, other_keys, other_partial in indexes
        if other_table == table
        and other != name
        and not other_partial
        and len(other_keys) > len(keys)
        and other_keys[: len(keys)] == keys
    )
    assert led == [], "\n".join(map(str, led))
