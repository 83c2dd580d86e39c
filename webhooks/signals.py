"""Where the events come from: a match's result (``tournaments.signals.results_changed``,
sent after commit) and the status of a stage or tournament moving to closed or finished.

Status changes are watched on save, so whichever service closes a stage or finishes a
tournament triggers the event without knowing about webhooks; the deliveries are recorded after
that transaction commits.
"""

import logging

from django.db import transaction
from django.db.models.signals import post_init, post_save

from tournaments.models import Stage, Tournament
from tournaments.signals import results_changed

logger = logging.getLogger(__name__)

_LOADED = "_webhooks_loaded_status"


def on_results_changed(sender, matches, **kwargs):
    from webhooks import services

    listened: dict[int, bool] = {}
    for match in matches:
        try:
            tournament = match.round.stage.tournament
            # Most tournaments have no endpoint: no payload to build (one query per tournament
            # instead of a dozen for every verified record).
            if tournament.pk not in listened:
                listened[tournament.pk] = services.endpoints_for(tournament).exists()
            if not listened[tournament.pk]:
                continue
            event, data = services.match_payload(match)
            services.dispatch(tournament, event, data)
        except Exception:  # result entry has committed; never let a webhook fail it
            logger.exception("webhooks: could not dispatch the result of match %s", match.pk)


def remember_status(sender, instance, **kwargs):
    # Only when the column was loaded: reading a deferred field would query the database.
    setattr(instance, _LOADED, instance.__dict__.get("status"))


def _on_transition(instance, closed_status, event_name, payload_name):
    previous = getattr(instance, _LOADED, None)
    setattr(instance, _LOADED, instance.status)
    if previous is None or previous == closed_status or instance.status != closed_status:
        return
    pk, model = instance.pk, type(instance)

    def dispatch():
        from webhooks import services

        try:
            fresh = model.objects.get(pk=pk)
            tournament = fresh if isinstance(fresh, Tournament) else fresh.tournament
            services.dispatch(tournament, event_name, getattr(services, payload_name)(fresh))
        except Exception:
            logger.exception("webhooks: could not dispatch %s for %s %s", event_name, model, pk)

    transaction.on_commit(dispatch)


def on_stage_saved(sender, instance, created, **kwargs):
    from webhooks.models import Event

    _on_transition(instance, Stage.Status.CLOSED, Event.STAGE_CLOSED, "stage_payload")


def on_tournament_saved(sender, instance, created, **kwargs):
    from webhooks.models import Event

    _on_transition(
        instance, Tournament.Status.FINISHED, Event.TOURNAMENT_FINISHED, "tournament_payload"
    )


def connect():
    results_changed.connect(on_results_changed, dispatch_uid="webhooks.result")
    for model, receiver in ((Stage, on_stage_saved), (Tournament, on_tournament_saved)):
        post_init.connect(remember_status, sender=model, dispatch_uid=f"webhooks.init.{model}")
        post_save.connect(receiver, sender=model, dispatch_uid=f"webhooks.save.{model}")
