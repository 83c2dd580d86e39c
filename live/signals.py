"""What makes the pages change: a match's result (sent after commit) and a stage saved (opened,
closed, reopened: the pages show its status), announced once the change has committed."""

from django.db import transaction
from django.db.models.signals import post_save

from live.groups import announce
from tournaments.models import Stage
from tournaments.signals import match_result_changed


def on_match_result_changed(sender, match, **kwargs):
    tournament_id = match.round.stage.tournament_id
    transaction.on_commit(lambda: announce(tournament_id, "result"))


def on_stage_saved(sender, instance, **kwargs):
    tournament_id = instance.tournament_id
    transaction.on_commit(lambda: announce(tournament_id, "stage"))


def connect():
    match_result_changed.connect(on_match_result_changed, dispatch_uid="live.result")
    post_save.connect(on_stage_saved, sender=Stage, dispatch_uid="live.stage")
