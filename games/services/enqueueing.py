"""Sending verifications to the workers, and finding the records still waiting for one.

The tasks (``games.tasks``) call the services; the services never import the tasks. They send
by task name through Celery's own registry of tasks (``games.apps`` imports the tasks module at
start-up, so every process that enqueues has them registered): ``apply_async`` on the
registered task still runs eagerly on the embedded default, which sending by name alone
(``send_task``) would not.
"""

import logging
from datetime import timedelta

from celery import current_app
from celery.app.task import Task
from django.conf import settings
from django.db import connection
from django.db.models.functions import Coalesce
from django.utils import timezone

from games.models import Submission, VerificationWake

logger = logging.getLogger(__name__)

# The verifying tasks, by the names they are registered under.
VERIFY_ONE = "games.tasks.verify_submission"
VERIFY_MANY = "games.tasks.verify_submissions"
VERIFY_WAITING = "games.tasks.verify_waiting_records"

# One quick reconnect (a pooled connection gone stale after a broker restart), then give up and
# leave the submission to the sweep: a broker outage must not hold up the API's answer.
PUBLISH_RETRY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.2}

BATCH_SIZE = getattr(settings, "GAMES_VERIFY_BATCH_SIZE", 50)

# A wake-up out for longer than this counts as lost (a broker that went away with it, a worker
# that died holding it on Redis): the next record submitted sends another. Meanwhile the ones
# it covered wait for the beat sweep. A wake-up still queued behind a long backlog costs one
# spare message every this many seconds.
WAKE_STALE_S = float(getattr(settings, "GAMES_WAKE_STALE_S", 2.0))


def _task(name: str) -> Task:
    return current_app.tasks[name]


def eager() -> bool:
    """Whether tasks run in the caller's process (the embedded default: no broker)."""
    return bool(current_app.conf.task_always_eager)


def enqueue_verification(submission_id: int, *, stamped: bool = False) -> bool:
    """Send the verification task; a broker outage leaves the submission pending for the sweep.

    ``stamped``: the row already says it was enqueued (``enqueued_at``, written with it), so a
    send costs no query of its own; the stamp is cleared when the broker refuses the message."""
    return _send(_task(VERIFY_ONE), submission_id, [submission_id], stamped=stamped)


def enqueue_verifications(ids: list[int], *, stamped: bool = False) -> None:
    """Send the verification of records stored together: one message per ``BATCH_SIZE`` of
    them (its worker verifies them as one batch) rather than one per record; a record stored
    alone wakes the workers unless a wake-up is out already (``wake_workers``). A message that
    cannot be sent leaves its records pending for the sweep."""
    if len(ids) == 1:
        if wakes_available():
            wake_workers(ids)
        else:
            enqueue_verification(ids[0], stamped=stamped)
        return
    for start in range(0, len(ids), BATCH_SIZE):
        chunk = ids[start : start + BATCH_SIZE]
        _send(_task(VERIFY_MANY), chunk, chunk, stamped=stamped)


def _send(task: Task, argument, ids: list[int], *, stamped: bool) -> bool:
    """Publish ``task(argument)`` and note when ``ids`` were enqueued (unless ``stamped``);
    False (logged) when the broker refused it: the stamp is then empty, and the sweep will send
    them again."""
    pending = Submission.objects.filter(pk__in=ids, state=Submission.State.PENDING)
    try:
        task.apply_async((argument,), retry=True, retry_policy=PUBLISH_RETRY)
    except Exception as exc:  # broker down: kombu/redis raise many kinds
        if task.app.conf.task_always_eager:
            raise
        logger.warning("submissions %s: could not enqueue (%s); the sweep will", ids, exc)
        if stamped:
            pending.update(enqueued_at=None)
        return False
    if not stamped:
        pending.update(enqueued_at=timezone.now())
    return True


def wakes_available() -> bool:
    """Whether records submitted alone wake the workers (``wake_workers``) rather than each
    sending its own message: real workers on PostgreSQL, whose advisory locks the batches they
    then take need. Eager runs verify each record in the caller's process, as before."""
    return not eager() and connection.vendor == "postgresql"


def wake_workers(ids: list[int] | tuple[int, ...] = ()) -> bool:
    """Ask a worker to verify every record waiting, unless a wake-up is out already; True when
    this call sent one. Call it once ``ids`` (the records that ask) are committed: a worker
    clears the mark before it claims anything, so either it sees them, or this call finds the
    mark cleared and sends another. ``ids`` are stamped ``enqueued_at`` when this call sends
    the message (in the statement that sets the mark: no query of its own), and left empty
    when one out already covers them or the broker refuses it (the sweep then sends them).

    One statement: the mark set where it is clear or older than ``WAKE_STALE_S`` (a message
    lost), the records stamped with it."""
    table = VerificationWake._meta.db_table
    submissions = Submission._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            WITH woke AS (
                INSERT INTO {table} AS wake (id, requested_at) VALUES (1, now())
                ON CONFLICT (id) DO UPDATE SET requested_at = excluded.requested_at
                WHERE wake.requested_at IS NULL
                    OR wake.requested_at < now() - make_interval(secs => %(stale)s)
                RETURNING wake.requested_at
            ), stamped AS (
                UPDATE {submissions} SET enqueued_at = (SELECT requested_at FROM woke)
                WHERE id = ANY(%(ids)s) AND EXISTS (SELECT 1 FROM woke)
            )
            SELECT requested_at FROM woke
            """,
            {"stale": WAKE_STALE_S, "ids": list(ids)},
        )
        row = cursor.fetchone()
    if row is None:
        return False  # one is out already: its worker will see these records
    task = _task(VERIFY_WAITING)
    try:
        task.apply_async(retry=True, retry_policy=PUBLISH_RETRY)
    except Exception as exc:  # broker down: kombu/redis raise many kinds
        logger.warning("could not wake the workers (%s); the sweep will send %s", exc, ids)
        # Clear the mark this call set (not a later one), so the next record tries again.
        VerificationWake.objects.filter(pk=1, requested_at=row[0]).update(requested_at=None)
        Submission.objects.filter(pk__in=ids, state=Submission.State.PENDING).update(
            enqueued_at=None
        )
        return False
    return True


def take_wake() -> None:
    """A worker takes the wake-up out: the mark is cleared (committed) before it claims any
    record, so a record committed after its claims sends a wake-up of its own."""
    VerificationWake.objects.filter(pk=1).update(requested_at=None)


def pending_among(ids) -> list[int]:
    """The submissions of ``ids`` still pending, in id order."""
    return list(
        Submission.objects.filter(pk__in=list(ids), state=Submission.State.PENDING)
        .order_by("pk")
        .values_list("pk", flat=True)
    )


def stale_pending(older_than_s: float):
    """Pending submissions not (re-)enqueued for ``older_than_s`` seconds."""
    cutoff = timezone.now() - timedelta(seconds=older_than_s)
    return (
        Submission.objects.filter(state=Submission.State.PENDING)
        .annotate(last_try=Coalesce("enqueued_at", "submitted_at"))
        .filter(last_try__lt=cutoff)
        .order_by("submitted_at")
    )
