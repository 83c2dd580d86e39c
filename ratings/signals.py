"""Receivers: a stored or corrected result enqueues the rating update."""

import logging

logger = logging.getLogger(__name__)


def on_results_changed(sender, matches, **kwargs):
    """Sent after commit; ask for one (debounced) rating run so result entry never waits on (or
    fails with) ratings. What to rate is read from the database, not from this message."""
    from ratings.tasks import request_rating

    try:
        request_rating()
    except Exception:  # a broker outage must not break result entry; the beat sweep catches up
        logger.exception(
            "could not enqueue the rating update of matches %s", [m.pk for m in matches]
        )


def on_stage_saved(sender, instance, created, **kwargs):
    """A duplicate stage saved closed: the tables withheld while its boards were secret are
    public now, so their ratings apply (after the commit; the beat sweep catches a lost
    message). Rated once: a second save finds nothing pending."""
    from django.db import transaction

    from tournaments.models import Stage

    if instance.kind != Stage.Kind.DUPLICATE or instance.status != Stage.Status.CLOSED:
        return
    stage_id = instance.pk

    def enqueue():
        from ratings.tasks import request_stage_rating

        try:
            request_stage_rating(stage_id)
        except Exception:  # a broker outage must not break closing the stage
            logger.exception("could not enqueue the ratings of stage %s", stage_id)

    transaction.on_commit(enqueue)


def _schedule_replay(scope):
    """After the deletion commits, replay from the deleted scope's first rated game."""
    if scope is None:
        return
    from django.db import transaction

    from ratings.services.ratings import key_to_json
    from ratings.tasks import replay_after_delete

    key, subjects = scope
    args = (key_to_json(key), [[str(s.pool), s.player_id, s.partner_id] for s in subjects])

    def enqueue():
        try:
            replay_after_delete.delay(*args)
        except Exception:  # recompute_ratings repairs the cache later
            logger.exception("could not enqueue the rating replay after a deletion")

    transaction.on_commit(enqueue)


def on_tournament_deleted(sender, instance, **kwargs):
    from ratings.services.ratings import rated_scope

    _schedule_replay(rated_scope(tournament_id_key=instance.pk))


def on_stage_deleted(sender, instance, **kwargs):
    from ratings.services.ratings import rated_scope

    _schedule_replay(
        rated_scope(tournament_id_key=instance.tournament_id, stage_order=instance.order)
    )


def on_tournament_imported(sender, tournament, **kwargs):
    """An imported tournament brings older results at once: replay the ratings from its start
    (``recompute_ratings`` can always rebuild them if the message is lost)."""
    from ratings.tasks import recompute_ratings_from

    try:
        recompute_ratings_from.delay(tournament.start_date.isoformat())
    except Exception:
        logger.exception("could not enqueue the rating replay after importing %s", tournament)
