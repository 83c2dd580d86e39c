"""What makes the live pages change, announced once the change has committed: a match's result
and a stage saved (opened, closed, reopened) for every page of the tournament; a change-log entry
and a record refused or in error for its desk only (results waiting for a decision are logged);
a role taken back for its desk sockets, which then close for whoever lost the right to listen."""

from django.db import transaction
from django.db.models.signals import post_delete, post_save

from live.groups import ROLES_CHANGED, announce
from tournaments.models import ChangeLog, Match, Stage, TournamentRole
from tournaments.signals import results_changed


def on_results_changed(sender, matches, **kwargs):
    for tournament_id in {match.round.stage.tournament_id for match in matches}:
        transaction.on_commit(lambda tournament_id=tournament_id: announce(tournament_id, "result"))


def on_stage_saved(sender, instance, **kwargs):
    tournament_id = instance.tournament_id
    transaction.on_commit(lambda: announce(tournament_id, "stage"))


def on_change_logged(sender, instance, created, **kwargs):
    if created:
        tournament_id = instance.tournament_id
        transaction.on_commit(lambda: announce(tournament_id, "log", desk_only=True))


def on_submission_saved(sender, instance, **kwargs):
    """A record refused or in error waits on the desk (verified ones change the result)."""
    if instance.state not in (sender.State.REJECTED, sender.State.ERROR):
        return
    tournament_id = (
        Match.objects.filter(pk=instance.match_id)
        .values_list("round__stage__tournament_id", flat=True)
        .first()
    )
    if tournament_id is not None:
        transaction.on_commit(lambda: announce(tournament_id, "record", desk_only=True))


def on_role_revoked(sender, instance, **kwargs):
    """A role taken back: the desk sockets of the tournament check who may still listen."""
    tournament_id = instance.tournament_id
    transaction.on_commit(lambda: announce(tournament_id, ROLES_CHANGED, desk_only=True))


def connect():
    from games.models import Submission

    results_changed.connect(on_results_changed, dispatch_uid="live.result")
    post_save.connect(on_stage_saved, sender=Stage, dispatch_uid="live.stage")
    post_save.connect(on_change_logged, sender=ChangeLog, dispatch_uid="live.log")
    post_save.connect(on_submission_saved, sender=Submission, dispatch_uid="live.record")
    post_delete.connect(on_role_revoked, sender=TournamentRole, dispatch_uid="live.roles")
