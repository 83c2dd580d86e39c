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
from django.db.models.functions import Coalesce
from django.utils import timezone

from games.models import Submission

logger = logging.getLogger(__name__)

# The verifying tasks, by the names they are registered under.
VERIFY_ONE = "games.tasks.verify_submission"
VERIFY_MANY = "games.tasks.verify_submissions"

# One quick reconnect (a pooled connection gone stale after a broker restart), then give up and
# leave the submission to the sweep: a broker outage must not hold up the API's answer.
PUBLISH_RETRY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.2}

BATCH_SIZE = getattr(settings, "GAMES_VERIFY_BATCH_SIZE", 50)


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
    them (its worker verifies them as one batch) rather than one per record. A message that
    cannot be sent leaves its records pending for the sweep."""
    if len(ids) == 1:
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
