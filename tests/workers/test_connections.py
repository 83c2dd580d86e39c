"""Workers keep their database connection between tasks and survive a dropped one."""

from types import SimpleNamespace

import pytest
from celery.fixups.django import DjangoFixup
from django.db import connection

from config.celery import KeepConnectionsFixup, app
from tests.db import other_connection
from tournaments.models import Match

TASK = SimpleNamespace(request=SimpleNamespace(is_eager=False))

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="needs PostgreSQL (DATABASE_URL)"
)


def run_task(fixup):
    fixup.on_task_prerun(sender=TASK)
    Match.objects.count()
    fixup.on_task_postrun(sender=TASK)


def test_the_worker_fixup_is_the_one_that_keeps_connections():
    fixups = [f for f in app._fixups if isinstance(f, DjangoFixup)]
    assert fixups and all(isinstance(f.worker_fixup, KeepConnectionsFixup) for f in fixups)


@pytest.mark.django_db(transaction=True)
def test_tasks_reuse_one_connection():
    fixup = KeepConnectionsFixup(app)
    run_task(fixup)
    pid = connection.connection.info.backend_pid
    for _ in range(3):
        run_task(fixup)
    assert connection.connection is not None
    assert connection.connection.info.backend_pid == pid


@pytest.mark.django_db(transaction=True)
def test_a_dropped_connection_is_replaced_before_the_next_task():
    """What a PostgreSQL restart does to a worker: its backend is gone between two tasks."""
    fixup = KeepConnectionsFixup(app)
    run_task(fixup)
    pid = connection.connection.info.backend_pid
    with other_connection() as other:
        other.execute("SELECT pg_terminate_backend(%s)", [pid])
    run_task(fixup)  # the health check reconnects instead of failing the task
    assert connection.connection.info.backend_pid != pid
