"""Penalties: the tournament's penalty table and the referee's penalties in a match.

A penalty is an adjustment of a line's score kept apart from the match's result versions, so a
later correction of the result leaves it standing (the standings take its VP off); only a
forfeit is itself a result, and it is written by ``tournaments.services.results``, the one
writer of results, with the referee's reason.
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.utils.translation import gettext as _

from tournaments.exceptions import PenaltyError
from tournaments.models import Match, Outcome, Penalty, PenaltyRule
from tournaments.services import changelog

logger = logging.getLogger(__name__)

MAX_REASON = 300


@transaction.atomic
def add_rule(tournament, *, label: str, kind: str, vp: int = 0, user=None) -> PenaltyRule:
    """Add a row to the penalty table; a deduction needs VP, the other kinds take none."""
    label = " ".join(label.split())[:120]
    if not label:
        raise PenaltyError(_("The penalty has no label."))
    if kind not in PenaltyRule.Kind.values:
        raise PenaltyError(_("Unknown kind of penalty."))
    if kind == PenaltyRule.Kind.DEDUCTION and vp < 1:
        raise PenaltyError(_("A deduction takes off at least 1 VP."))
    if kind != PenaltyRule.Kind.DEDUCTION:
        vp = 0
    if PenaltyRule.objects.filter(tournament=tournament, label__iexact=label).exists():
        raise PenaltyError(_("The penalty table already has “%(label)s”.") % {"label": label})
    rule = PenaltyRule.objects.create(tournament=tournament, label=label, kind=kind, vp=vp)
    changelog.record(
        tournament, "penalty_rule.added", user=user, rule=rule.pk, label=label, kind=kind, vp=vp
    )
    return rule


@transaction.atomic
def remove_rule(tournament, rule_id: int, *, user=None) -> None:
    """Remove a row of the table; penalties already given keep their label and VP."""
    rule = PenaltyRule.objects.filter(tournament=tournament, pk=rule_id).first()
    if rule is None:
        raise PenaltyError(_("This penalty is no longer in the table."))
    changelog.record(tournament, "penalty_rule.removed", user=user, rule=rule.pk, label=rule.label)
    rule.delete()


def apply_penalty(match: Match, line_id: int, rule_id: int, *, reason: str, user=None) -> Penalty:
    """The referee gives ``line`` the penalty ``rule`` of the tournament's table in ``match``.

    A forfeit writes the match's result (the line loses by forfeit, as the rules score one)
    through the results service, in the same transaction as the penalty's row.
    """
    from tournaments.services import results

    tournament = match.round.stage.tournament
    reason = " ".join((reason or "").split())[:MAX_REASON]
    if not reason:
        raise PenaltyError(_("Give the reason for the penalty."))
    if line_id not in (match.home_id, match.away_id) or not (match.home_id and match.away_id):
        raise PenaltyError(_("Only a line playing in this match can be penalised in it."))
    rule = PenaltyRule.objects.filter(tournament=tournament, pk=rule_id).first()
    if rule is None:
        raise PenaltyError(_("This penalty is no longer in the table."))
    with transaction.atomic():
        if rule.kind == PenaltyRule.Kind.FORFEIT:
            results.save_result(
                match, [], outcome=Outcome.FORFEIT, offender=line_id, user=user, reason=reason
            )
        penalty = Penalty.objects.create(
            match=match,
            line_id=line_id,
            kind=rule.kind,
            label=rule.label,
            vp=rule.vp,
            reason=reason,
            user=user if getattr(user, "is_authenticated", False) else None,
        )
        changelog.record(
            tournament,
            "penalty.given",
            match=match,
            user=user,
            penalty=penalty.pk,
            line=line_id,
            label=rule.label,
            kind=rule.kind,
            vp=rule.vp,
            reason=reason,
        )
    logger.info("match %s: penalty %s to line %s", match.pk, rule.label, line_id)
    return penalty


@transaction.atomic
def withdraw_penalty(match: Match, penalty_id: int, *, user=None) -> None:
    """Take back a penalty given by mistake (a forfeit's result stays: correct it as a result)."""
    penalty = Penalty.objects.filter(match=match, pk=penalty_id).first()
    if penalty is None:
        raise PenaltyError(_("This penalty was already taken back."))
    changelog.record(
        match.round.stage.tournament,
        "penalty.withdrawn",
        match=match,
        user=user,
        penalty=penalty.pk,
        line=penalty.line_id,
        label=penalty.label,
    )
    penalty.delete()
