"""Celery tasks: ratings follow verified results in the background.

Messages only say "look soon": what to rate is read from the database
(``ratings.services.ratings.pending_match_ids``), so a lost message, a broker restarted empty, a
database restart or a killed worker delays a rating but never loses it — the beat sweep runs the
same task every ``SCOPA_RATING_SWEEP_EVERY_S`` seconds.
"""

import logging
import os
from typing import TypedDict

from celery import shared_task
from django.core.cache import cache
from django.db import InterfaceError, OperationalError

logger = logging.getLogger(__name__)

# Database trouble that goes away by itself (connection lost, deadlock, serialization failure).
TRANSIENT_ERRORS = (OperationalError, InterfaceError)


class RetryOptions(TypedDict):
    """Celery's retry options of these tasks (typed, so that ``**RETRY`` is checked)."""

    autoretry_for: tuple[type[Exception], ...]
    retry_backoff: int
    retry_backoff_max: int
    retry_jitter: bool
    max_retries: int


RETRY: RetryOptions = {
    "autoretry_for": TRANSIENT_ERRORS,
    "retry_backoff": 1,
    "retry_backoff_max": 60,
    # No jitter: RabbitMQ's native delayed delivery takes whole seconds >= 1 (a jittered 0 fails).
    "retry_jitter": False,
    "max_retries": 8,
}
DEBOUNCE_KEY = "ratings:rate-pending-scheduled"
# How far back a debounced run looks for changed matches (far beyond any queueing delay).
RECENT_S = 600


def debounce_s() -> float:
    """How long results gather before one replay rates them all."""
    return float(os.environ.get("SCOPA_RATING_DEBOUNCE_S", "1"))


def _window() -> int:
    """The debounce window in whole seconds, at least 1: RabbitMQ's native delayed delivery
    counts whole seconds from 1."""
    return max(1, round(debounce_s()))


def request_rating() -> None:
    """Ask for the pending results to be rated soon: at most one task per debounce window.

    The mark expires when the task it scheduled runs (it is published afterwards, with the
    window as countdown), so a result committed inside the window is seen by that task and one
    committed after it schedules the next, even where the cache is per process."""
    window = _window()
    if cache.add(DEBOUNCE_KEY, 1, timeout=window):
        rate_pending.apply_async(countdown=window)


@shared_task(
    bind=True,
    name="ratings.rate_pending",
    acks_late=True,
    soft_time_limit=600,
    time_limit=660,
    **RETRY,
)
def rate_pending(self, full: bool = False, stage_id: int | None = None) -> str:
    """Rate every result in force that is not rated yet (or changed since), in one replay.

    Debounced runs look at the matches changed in the last ``RECENT_S`` seconds; the beat
    sweep (``full``) at every match, which is what catches a message lost for longer;
    ``stage_id`` at every match of one stage (a duplicate stage closed shows its tables)."""
    from datetime import timedelta

    from django.utils import timezone

    from ratings.services.ratings import rate_pending as rate

    cache.delete(DEBOUNCE_KEY)  # eager runs: the next result asks again at once
    since = None if full or stage_id else timezone.now() - timedelta(seconds=RECENT_S)
    outcome = rate(since=since, stage_id=stage_id)
    if outcome is False:  # another worker is rating: look again once it is done
        if not self.request.is_eager:  # not at once: that would spin while a replay runs
            rate_pending.apply_async(kwargs={"stage_id": stage_id}, countdown=_window())
        return "busy"
    if outcome is None:
        return "nothing"
    return f"{outcome.kind}: {outcome.games}"


def request_stage_rating(stage_id: int) -> None:
    """Ask for one stage's results still unrated to be rated: a duplicate stage closed shows
    every table its secret boards kept back (``ratings.services.ratings.withheld_match_ids``),
    however long ago they were played."""
    rate_pending.apply_async(kwargs={"stage_id": stage_id})


@shared_task(
    name="ratings.update_match_rating",
    acks_late=True,
    soft_time_limit=30,
    time_limit=40,
    **RETRY,
)
def update_match_rating(match_id: int) -> None:
    """Messages of the former per-result task still in a queue: rate whatever is pending."""
    request_rating()


@shared_task(
    name="ratings.recompute_ratings", acks_late=True, soft_time_limit=3600, time_limit=3660, **RETRY
)
def recompute_ratings() -> None:
    from ratings.services.ratings import recompute

    recompute(reason="task")


@shared_task(
    name="ratings.recompute_ratings_from",
    acks_late=True,
    soft_time_limit=3600,
    time_limit=3660,
    **RETRY,
)
def recompute_ratings_from(day: str) -> None:
    """Replay from a date (after an import brought in older results)."""
    from datetime import date

    from ratings.services.ratings import recompute, start_key_for_date

    recompute(start_key_for_date(date.fromisoformat(day)), reason=f"replay from {day}")


@shared_task(
    name="ratings.replay_after_delete",
    acks_late=True,
    soft_time_limit=3600,
    time_limit=3660,
    **RETRY,
)
def replay_after_delete(key: list, subjects: list) -> None:
    """Rated matches were deleted (with their tournament, stage or round): replay from there."""
    from ratings.algorithms.rating import Pool, Subject
    from ratings.services.ratings import key_from_json, recompute

    recompute(
        key_from_json(key),
        reason="rated matches deleted",
        extra_subjects=[Subject(Pool(p), a, b) for p, a, b in subjects],
    )
