"""The Celery application.

With no ``CELERY_BROKER_URL`` the settings make every task run eagerly in the caller's process,
so the project works on a fresh machine with nothing else running.
"""

import gc
import logging
import os

from celery import Celery, signals

# celery-types describes DjangoFixup only, not the worker side it builds.
from celery.fixups.django import DjangoFixup, DjangoWorkerFixup  # type: ignore[attr-defined]

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

logger = logging.getLogger(__name__)


class KeepConnectionsFixup(DjangoWorkerFixup):
    """Celery's Django fixup, but connections follow Django's own rule between tasks.

    The stock fixup closes every database connection before and after each task, so a worker
    paid a new PostgreSQL connection (most of the database's CPU per record) twice per task and
    ``CONN_MAX_AGE`` had no effect. Between tasks we do what Django does between requests:
    close a connection only if it is broken, in a transaction it left open, or older than
    ``CONN_MAX_AGE``; ``CONN_HEALTH_CHECKS`` then checks it before the next task's first query,
    so a restarted PostgreSQL costs one reconnect, not a failed task. A forked pool process
    still drops the connections it inherited (``on_worker_process_init`` is unchanged).
    """

    def close_database(self, **kwargs) -> None:
        for conn in self._db.connections.all(initialized_only=True):
            try:
                conn.close_if_unusable_or_obsolete()
            except self.interface_errors:
                pass
            except self.DatabaseError:
                conn.close()


class KeepConnectionsDjangoFixup(DjangoFixup):
    """Celery's Django fixup with :class:`KeepConnectionsFixup` for the worker side.

    The worker side is built when a worker first needs it, not when this module is imported:
    building it reads the settings, and ``config.wsgi``/``config.asgi`` must set
    ``SCOPA_ENTRY_POINT`` before the settings load (they refuse a server without SECRET_KEY).
    """

    _worker_fixup: DjangoWorkerFixup | None  # set by DjangoFixup.__init__

    @property
    def worker_fixup(self) -> DjangoWorkerFixup:
        if self._worker_fixup is None:
            self._worker_fixup = KeepConnectionsFixup(self.app)
        return self._worker_fixup

    @worker_fixup.setter
    def worker_fixup(self, value: DjangoWorkerFixup) -> None:
        self._worker_fixup = value


def keep_connections_fixup(celery_app: Celery) -> DjangoFixup:
    """The app's Django fixup (named in ``Celery(fixups=...)`` instead of Celery's own)."""
    fixup = KeepConnectionsDjangoFixup(celery_app)
    fixup.install()  # returns the fixup itself (its stub says None)
    return fixup


app = Celery("scopa", fixups=["config.celery:keep_connections_fixup"])
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# `celery beat` re-enqueues submissions left pending (see games.tasks.sweep_pending), so a broker
# outage delays verification but loses nothing; the rating sweep rates whatever results in force
# are not rated yet (a lost message, a dead worker), read from the database; the webhook sweep
# queues again deliveries whose message was lost (see webhooks.tasks.sweep_stuck).
app.conf.beat_schedule = {
    "sweep-pending-submissions": {
        "task": "games.tasks.sweep_pending",
        "schedule": float(os.environ.get("SCOPA_SWEEP_EVERY_S", "60")),
    },
    "rate-pending-results": {
        "task": "ratings.rate_pending",
        "schedule": float(os.environ.get("SCOPA_RATING_SWEEP_EVERY_S", "60")),
        "kwargs": {"full": True},
    },
    # sheets at the table not countersigned in time go to the referee (scoresheets/tasks.py)
    "expire-table-reports": {
        "task": "scoresheets.expire_reports",
        "schedule": float(os.environ.get("SCOPA_TABLE_SWEEP_EVERY_S", "60")),
    },
    # Webhook deliveries whose broker message was lost (pending or retrying with no attempt
    # long past when one was due) are queued again: none stays pending for ever.
    "sweep-stuck-webhook-deliveries": {
        "task": "webhooks.tasks.sweep_stuck",
        "schedule": float(os.environ.get("SCOPA_WEBHOOK_SWEEP_EVERY_S", "60")),
    },
}


@signals.worker_process_init.connect
@signals.worker_ready.connect
def freeze_what_the_worker_started_with(**kwargs) -> None:
    """Leave the objects a worker process starts with out of the garbage collector's scans.

    A worker starts with the whole project imported: several hundred thousand objects the
    collector tracks and never frees. Every full collection walked them all, about 0.1 s each
    time a batch's allocations triggered one, which was 0.1–0.2 ms of a verified record's CPU
    when it was measured (``bench/verify_batch.py`` measures a worker's own work). Frozen,
    collections skip them (and a forked pool process shares their memory pages with its parent
    longer). Pool processes freeze when they start (``worker_process_init``); a worker without a
    pool when it is ready.
    """
    gc.freeze()
    logger.debug("worker: %d objects left out of garbage collection", gc.get_freeze_count())
