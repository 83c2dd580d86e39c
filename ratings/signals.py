"""Receivers: a stored or corrected result enqueues the rating update."""

import logging

logger = logging.getLogger(__name__)


def on_match_result_changed(sender, match, **kwargs):
    """Sent after commit; enqueue so result entry never waits on (or fails with) ratings."""
    from ratings.tasks import update_match_rating

    match_id = getattr(match, "pk", match)
    try:
        update_match_rating.delay(match_id)
    except Exception:  # a broker outage must not break result entry; recompute catches up
        logger.exception("could not enqueue the rating update of match %s", match_id)
