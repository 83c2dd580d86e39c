"""Where the events come from: a match's result (``tournaments.signals.results_written``, sent
inside the transaction that writes it) and the status of a stage or tournament moving to closed
or finished (watched on save, so whichever service closes a stage or finishes a tournament
triggers the event without knowing about webhooks).

Either way the deliveries are written in the transaction of the change, so they commit or roll
back with it (``webhooks.services.record_results`` / ``record_transition``); only queueing them
waits for the commit.
"""

from django.db.models.signals import post_init, post_save

from tournaments.models import Stage, Tournament
from tournaments.signals import results_written

_LOADED = "_webhooks_loaded_status"


def on_results_written(sender, match_ids, **kwargs):
    from webhooks import services

    services.record_results(match_ids)


def remember_status(sender, instance, **kwargs):
    # Only when the column was loaded: reading a deferred field would query the database.
    setattr(instance, _LOADED, instance.__dict__.get("status"))


def _on_transition(instance, closed_status, event_name):
    previous = getattr(instance, _LOADED, None)
    setattr(instance, _LOADED, instance.status)
    if previous is None or previous == closed_status or instance.status != closed_status:
        return
    from webhooks import services

    services.record_transition(instance, event_name)


def on_stage_saved(sender, instance, created, **kwargs):
    from webhooks.models import Event

    _on_transition(instance, Stage.Status.CLOSED, Event.STAGE_CLOSED)


def on_tournament_saved(sender, instance, created, **kwargs):
    from webhooks.models import Event

    _on_transition(instance, Tournament.Status.FINISHED, Event.TOURNAMENT_FINISHED)


def connect():
    results_written.connect(on_results_written, dispatch_uid="webhooks.result")
    for model, receiver in ((Stage, on_stage_saved), (Tournament, on_tournament_saved)):
        post_init.connect(remember_status, sender=model, dispatch_uid=f"webhooks.init.{model}")
        post_save.connect(receiver, sender=model, dispatch_uid=f"webhooks.save.{model}")
