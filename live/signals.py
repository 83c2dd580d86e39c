"""What makes the live pages change, announced once the change has committed: a match's result
and a stage saved (opened, closed, reopened) for every page of the tournament; a change-log entry
and a record refused or in error for its desk only (results waiting for a decision are logged);
a role taken back for its desk sockets, which then close for whoever lost the right to listen."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from functools import partial
from typing import TYPE_CHECKING

from django.db import transaction
from django.db.models.signals import post_delete, post_save

from live.groups import LiveEvent, announce
from live.versions import bump_version
from tournaments.models import ChangeLog, Match, Stage, TournamentRole
from tournaments.signals import on_commit_once, results_changed

if TYPE_CHECKING:
    from games.models import Submission

logger = logging.getLogger(__name__)


def on_results_changed(sender: object, matches: Iterable[Match], **kwargs: object) -> None:
    by_tournament: dict[int, list[int]] = {}
    for match in matches:
        by_tournament.setdefault(match.round.stage.tournament_id, []).append(match.pk)
    for tournament_id, match_ids in by_tournament.items():
        transaction.on_commit(partial(announce_result, tournament_id, match_ids))


def announce_result(tournament_id: int, match_ids: list[int]) -> None:
    """After the commit: move the pages' version, then push the changed rows at that version."""
    try:
        version = bump_version(tournament_id)
    except Exception:  # the cache is down: the pages fetch themselves (no version to apply)
        logger.exception("live: could not move the version of tournament %s", tournament_id)
        announce(tournament_id, LiveEvent.RESULT)
        return
    announce(tournament_id, LiveEvent.RESULT, version=version, match_ids=match_ids)


def on_stage_saved(sender: type[Stage], instance: Stage, **kwargs: object) -> None:
    tournament_id = instance.tournament_id
    transaction.on_commit(partial(announce, tournament_id, LiveEvent.STAGE))


def on_change_logged(
    sender: type[ChangeLog], instance: ChangeLog, created: bool, **kwargs: object
) -> None:
    if created:  # a step logs two or three entries: its desk hears of them once
        on_commit_once(announce, instance.tournament_id, LiveEvent.LOG)


def on_submission_saved(sender: type[Submission], instance: Submission, **kwargs: object) -> None:
    """A record refused or in error waits on the desk (verified ones change the result)."""
    if instance.state not in (sender.State.REJECTED, sender.State.ERROR):
        return
    tournament_id = (
        Match.objects.filter(pk=instance.match_id)
        .values_list("round__stage__tournament_id", flat=True)
        .first()
    )
    if tournament_id is not None:
        transaction.on_commit(partial(announce, tournament_id, LiveEvent.RECORD))


def on_role_revoked(
    sender: type[TournamentRole], instance: TournamentRole, **kwargs: object
) -> None:
    """A role taken back: the desk sockets of the tournament check who may still listen."""
    transaction.on_commit(partial(announce, instance.tournament_id, LiveEvent.ROLES))


def connect() -> None:
    from games.models import Submission

    results_changed.connect(on_results_changed, dispatch_uid="live.result")
    post_save.connect(on_stage_saved, sender=Stage, dispatch_uid="live.stage")
    post_save.connect(on_change_logged, sender=ChangeLog, dispatch_uid="live.log")
    post_save.connect(on_submission_saved, sender=Submission, dispatch_uid="live.record")
    post_delete.connect(on_role_revoked, sender=TournamentRole, dispatch_uid="live.roles")
