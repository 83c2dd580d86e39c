"""Celery tasks: ratings follow verified results in the background."""

import logging

from celery import shared_task

logger = logging.getLogger(__name__)


@shared_task(name="ratings.update_match_rating", acks_late=True)
def update_match_rating(match_id: int) -> None:
    """Rate a new result, or replay from a corrected or out-of-order one."""
    from ratings.services.ratings import update_for_match

    update_for_match(match_id)


@shared_task(name="ratings.recompute_ratings", acks_late=True)
def recompute_ratings() -> None:
    from ratings.services.ratings import recompute

    recompute(reason="task")


@shared_task(name="ratings.recompute_ratings_from", acks_late=True)
def recompute_ratings_from(day: str) -> None:
    """Replay from a date (after an import brought in older results)."""
    from datetime import date

    from ratings.services.ratings import recompute, start_key_for_date

    recompute(start_key_for_date(date.fromisoformat(day)), reason=f"replay from {day}")


@shared_task(name="ratings.replay_after_delete", acks_late=True)
def replay_after_delete(key: list, subjects: list) -> None:
    """Rated matches were deleted (with their tournament, stage or round): replay from there."""
    from ratings.algorithms.rating import Pool, Subject
    from ratings.services.ratings import key_from_json, recompute

    recompute(
        key_from_json(key),
        reason="rated matches deleted",
        extra_subjects=[Subject(Pool(p), a, b) for p, a, b in subjects],
    )
