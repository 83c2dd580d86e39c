"""Celery tasks: verify the records waiting when a record submitted alone wakes the workers
(``services.verify_all_waiting``); verify a submission, or the records submitted together (each
with the records waiting beside it, in one batch: ``services.verify_waiting``); sweep up
submissions left pending.

Delivery is at-least-once (``acks_late`` and ``reject_on_worker_lost`` in the settings and
here): a task can run twice, so ``services.run_verification`` does nothing for a submission
that already has its final state, and writes the verdict and the match result in one
transaction with the match row locked.
"""

import contextlib
import logging
import os
import time
from typing import Literal, TypedDict

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.db import DatabaseError

from games import services

logger = logging.getLogger(__name__)

TRANSIENT_ERRORS = services.TRANSIENT_ERRORS
MAX_RETRIES = 6


def pending_after_s() -> float:
    """How long a submission may stay pending before the sweep enqueues it again."""
    return float(os.environ.get("SCOPA_PENDING_AFTER_S", "120"))


# How long a verification may take (``services.verifying`` says why, and its refusal names it).
VERIFY_SOFT_LIMIT_S = services.VERIFY_SOFT_LIMIT_S
VERIFY_HARD_LIMIT_S = services.VERIFY_HARD_LIMIT_S


# How long a message of records submitted together goes on leading batches. Each batch its lead
# takes is the oldest records waiting, not necessarily its own: with many waiting, leading one
# batch after another for all of its records would reach the soft time limit (the record under
# way then ends in error, and the hard limit counts a poison attempt against every record of
# the batch). What is left goes out again as a new message.
BATCHES_BUDGET_S = VERIFY_SOFT_LIMIT_S / 3


class _VerifyOptions(TypedDict):
    """The verifying tasks' Celery options (typed, so that ``**_VERIFY_OPTIONS`` is checked)."""

    bind: Literal[True]
    acks_late: bool
    reject_on_worker_lost: bool
    max_retries: int
    soft_time_limit: int
    time_limit: int


_VERIFY_OPTIONS: _VerifyOptions = {
    "bind": True,
    "acks_late": True,
    "reject_on_worker_lost": True,
    "max_retries": MAX_RETRIES,
    "soft_time_limit": VERIFY_SOFT_LIMIT_S,
    "time_limit": VERIFY_HARD_LIMIT_S,
}


@shared_task(name=services.VERIFY_ONE, **_VERIFY_OPTIONS)
def verify_submission(self, submission_id: int) -> str:
    """Verify the submission, with the records waiting beside it (``services.verify_waiting``).

    Eager runs (the embedded default, most tests) verify the one record alone, as before."""
    state = _verify(self, submission_id)
    if state == "claimed":
        # Another worker's batch holds it: look again shortly, so it is not left to the
        # sweep should that worker die.
        _look_again(verify_submission, submission_id)
    return state


@shared_task(name=services.VERIFY_MANY, **_VERIFY_OPTIONS)
def verify_submissions(self, submission_ids: list[int]) -> dict[int, str]:
    """Verify records submitted together (one message for a batch of them): each one still
    pending leads a batch (``verify_submission``'s work) until none is left, or for
    ``BATCHES_BUDGET_S`` (the rest goes out again). A retry sends the same list again; the
    records already final are passed over."""
    states: dict[int, str] = {}
    started = time.monotonic()
    todo = services.pending_among(submission_ids)
    while todo and not (states and time.monotonic() - started > BATCHES_BUDGET_S):
        lead = todo[0]
        states[lead] = _verify(self, lead)
        todo = services.pending_among(todo[1:])
    # Held by another worker's batch, or left when the budget ran out: one message for them.
    later = sorted({pk for pk, state in states.items() if state == "claimed"} | set(todo))
    if later:
        _look_again(verify_submissions, later)
    return states


# A wake-up given back by the broker (its worker died) that finds records still held by another
# session looks again this often, this many times: together longer than a task may run (a live
# worker's claims end with its task), so past them what is still held is left to the beat sweep.
LOOK_AGAIN_S = 1
MAX_LOOKS = VERIFY_HARD_LIMIT_S // LOOK_AGAIN_S + 5


@shared_task(name=services.VERIFY_WAITING, **_VERIFY_OPTIONS)
def verify_waiting_records(self, looks: int = 0) -> int:
    """A wake-up (``services.wake_workers``, sent by a record submitted alone when none is
    out): verify the records waiting, batch after batch, until none is left
    (``services.verify_all_waiting``); how many it took. Database trouble retries the whole
    wake-up, the batch under way given back its first try.

    A wake-up the broker gave back (``_redelivered``: its worker died) may come before
    PostgreSQL has ended the dead worker's session, whose claims then still hold the records
    it was verifying (``services.claims_held_elsewhere``): it looks at them again shortly,
    ``looks`` counting the times. A first delivery does not: the records another session
    holds then are a live worker's, which verifies them (looking after each of them cost a
    message and five statements a record at 50 records a second)."""
    try:
        taken = services.verify_all_waiting(
            budget_s=BATCHES_BUDGET_S, too_slow=SoftTimeLimitExceeded
        )
        if (looks or _redelivered(self)) and looks < MAX_LOOKS and services.claims_held_elsewhere():
            logger.warning("records still claimed by another session: looking again (%d)", looks)
            _look_again(verify_waiting_records, looks=looks + 1)
        return taken
    except TRANSIENT_ERRORS as exc:
        if self.request.retries >= self.max_retries:
            # what is still pending waits for the next wake-up, or the sweep
            logger.error("verifying the waiting records: giving up after %s retries", exc)
            return 0
        countdown = min(2**self.request.retries, 60)
        logger.warning("verifying the waiting records: %s; retrying in %ss", exc, countdown)
        raise self.retry(exc=exc, countdown=countdown) from exc


def _redelivered(task) -> bool:
    """Whether the broker gave this message back after its worker died (RabbitMQ requeues an
    unacknowledged message as soon as the connection goes)."""
    return bool((task.request.delivery_info or {}).get("redelivered"))


def _look_again(task, *args, **kwargs) -> None:
    try:
        task.apply_async(args, kwargs=kwargs, countdown=LOOK_AGAIN_S)
    except Exception as exc:  # broker down: the sweep will find it if still pending
        logger.warning("%s%s: could not look again (%s)", task.name, args or "", exc)


def _verify(task, submission_id: int) -> str:
    """One record and the batch it leads, with the retries and limits of a verification task."""
    try:
        if task.request.is_eager or not services.batching_available():
            return services.run_verification(submission_id)
        return services.verify_waiting(submission_id, too_slow=SoftTimeLimitExceeded)
    except TRANSIENT_ERRORS as exc:
        if task.request.retries >= task.max_retries:
            logger.error("submission %s: giving up after %s retries", submission_id, exc)
            _mark_error(submission_id, f"{type(exc).__name__}: {exc}")
            return "error"
        with contextlib.suppress(DatabaseError):
            services.uncount_attempt(submission_id)
        countdown = min(2**task.request.retries, 60)
        logger.warning("submission %s: %s; retrying in %ss", submission_id, exc, countdown)
        raise task.retry(exc=exc, countdown=countdown) from exc
    except SoftTimeLimitExceeded:
        logger.error("submission %s: verification over %ss", submission_id, VERIFY_SOFT_LIMIT_S)
        _mark_error(submission_id, services.slow_reason())
        return "error"
    except Exception as exc:
        logger.exception("submission %s: verification failed", submission_id)
        _mark_error(submission_id, f"{type(exc).__name__}: {exc}")
        return "error"


def _mark_error(submission_id, reason):
    try:
        services.mark_error(submission_id, reason)
    except DatabaseError:
        # Still pending: the sweep will try again once the database is back.
        logger.exception("submission %s: could not record the error", submission_id)


@shared_task(
    name="games.tasks.sweep_pending",
    autoretry_for=TRANSIENT_ERRORS,
    retry_backoff=1,
    retry_backoff_max=60,
    max_retries=MAX_RETRIES,
    soft_time_limit=120,
    time_limit=150,
)
def sweep_pending(older_than_s: float | None = None, limit: int = 1000) -> int:
    """Re-enqueue submissions left pending (a broker outage, a lost message); how many.

    Where the workers can be woken (``services.wakes_available``), one wake-up covers them all
    rather than a message each: its worker verifies them batch after batch, and those whose
    earlier delivery died one at a time and alone, as for records submitted alone (a poison
    record still ends failed after its attempts). None is sent while a fresh wake-up is out:
    its worker sees them."""
    older = pending_after_s() if older_than_s is None else older_than_s
    ids = list(services.stale_pending(older).values_list("pk", flat=True)[:limit])
    if not ids:
        return 0
    if services.wakes_available():
        sent = len(ids) if services.wake_workers(ids) else 0
    else:
        sent = sum(1 for pk in ids if services.enqueue_verification(pk))
    logger.info("sweep: %d pending submissions, %d re-enqueued", len(ids), sent)
    return sent
