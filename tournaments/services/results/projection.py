"""The projection of the version in force into the rows standings read: ``MatchResult`` (VP and
MP by the tournament's table) and the match row (winner, outcome, status), and the knock-out
lines moved into later matches. Nothing else writes those tables.
"""

from __future__ import annotations

import logging

from django.utils.translation import gettext as _

from tournaments.algorithms import vp as vp_algo
from tournaments.exceptions import ResultError, TournamentError
from tournaments.models import (
    Match,
    MatchResult,
    Outcome,
    Stage,
    Tournament,
)
from tournaments.services import rows
from tournaments.services.results.batch import (
    PROJECTED_MATCH_FIELDS,
    SCORE_COLUMNS,
    ScoreRow,
    _batch,
)
from tournaments.services.results.reading import Decision
from tournaments.services.vp import vp_table_from_model

logger = logging.getLogger(__name__)


def _move_line(dependent_id: int | None, slot: str, line_id: int | None, source: Match) -> None:
    """Put ``line_id`` into a later knock-out match, refusing if that match has a result."""
    if dependent_id is None:
        return
    dependent = Match.objects.select_for_update().get(pk=dependent_id)
    attribute = "home_id" if slot == Match.Slot.HOME else "away_id"
    if getattr(dependent, attribute) == line_id:
        return
    if dependent.status == Match.Status.DONE and dependent.outcome != Outcome.BYE:
        raise ResultError(
            _(
                "The result of the later match “%(later)s” depends on this one: delete that "
                "result first."
            )
            % {"later": dependent}
        )
    setattr(dependent, attribute, line_id)
    dependent.save(update_fields=[attribute.removesuffix("_id"), "updated_at"])
    logger.info("match %s: line %s moves on to match %s", source.pk, line_id, dependent.pk)


def _advance(match: Match, winner_id: int | None, loser_id: int | None) -> None:
    _move_line(match.next_match_id, match.next_slot, winner_id, match)
    _move_line(match.loser_next_match_id, match.loser_next_slot, loser_id, match)


def _vp_table(tournament: Tournament) -> vp_algo.VPTable:
    batch = _batch.get()
    if batch is not None and tournament.vp_table_id in batch.vp_tables:
        return batch.vp_tables[tournament.vp_table_id]
    try:
        table = vp_table_from_model(tournament.vp_table)
    except TournamentError as error:
        raise ResultError(error.message) from error
    if batch is not None:
        batch.vp_tables[tournament.vp_table_id] = table
    return table


def _copy_state(source: Match, target: Match) -> None:
    if source is target:
        return
    for name in (
        "home_id",
        "away_id",
        "winner_id",
        "outcome",
        "offender_id",
        "status",
        "has_tiebreak",
    ):
        setattr(target, name, getattr(source, name))


def _unadvance(match: Match) -> None:
    """Take this match's lines out of the later knock-out matches they had moved on to."""
    for dependent_id, slot in (
        (match.next_match_id, match.next_slot),
        (match.loser_next_match_id, match.loser_next_slot),
    ):
        if dependent_id is None:
            continue
        dependent = Match.objects.select_for_update().get(pk=dependent_id)
        if dependent.status == Match.Status.DONE and dependent.outcome != Outcome.BYE:
            raise ResultError(
                _(
                    "The result of the later match “%(later)s” depends on this one: delete "
                    "that result first."
                )
                % {"later": dependent}
            )
        attribute = "home" if slot == Match.Slot.HOME else "away"
        setattr(dependent, attribute, None)
        dependent.save(update_fields=[attribute, "updated_at"])


def _project(match: Match, decision: Decision | None) -> list[ScoreRow] | list[MatchResult]:
    """Rewrite the projection (MatchResult, the match row, later knock-out slots) from the
    decision of the version in force; ``None`` clears it. In a :class:`ResultBatch`
    the new rows wait for its flush."""
    batch = _batch.get()
    if batch is not None and batch.pending(match):
        raise RuntimeError(f"match {match.pk}: flush the batch before writing it again")
    if match.status != Match.Status.SCHEDULED or batch is None:
        # a scheduled match has no projection to clear (it is cleared when it goes back)
        MatchResult.objects.filter(match=match).delete()
    if decision is None:
        _unadvance(match)
        match.winner = None
        match.offender = None
        match.outcome = ""
        match.status = Match.Status.SCHEDULED
        match.has_tiebreak = False
        match.save(update_fields=PROJECTED_MATCH_FIELDS)
        return []
    if decision.outcome == Outcome.BYE:
        return _project_bye(match)
    table = _vp_table(match.round.stage.tournament)
    winner_side = decision.winner_side
    draw = winner_side is None
    score = vp_algo.match_score(
        table, decision.margin, vp_algo.Outcome(decision.outcome), draw=draw
    )
    home_id, away_id = match.home_id, match.away_id
    if home_id is None or away_id is None:  # pragma: no cover - every writer checked the lines
        raise ResultError(_("This match does not have both lines yet."))
    lines = (home_id, away_id)
    winner_id = loser_id = None
    if winner_side is not None:
        winner_id, loser_id = lines[winner_side], lines[1 - winner_side]
        _advance(match, winner_id, loser_id)
    results = []
    for side in (0, 1):
        won = not draw and side == winner_side
        if draw:
            vp, mp = score.vp_winner, 0
        elif won:
            vp, mp = score.vp_winner, score.mp_winner
        else:
            vp, mp = score.vp_loser, score.mp_loser
        results.append(ScoreRow(match.pk, lines[side], decision.totals[side], mp, vp, won, draw))
    match.winner_id = winner_id
    match.outcome = decision.outcome
    match.offender_id = None if decision.offender_side is None else lines[decision.offender_side]
    match.status = Match.Status.DONE
    match.has_tiebreak = any(deal.is_tiebreak for deal in decision.deals)
    if batch is not None:
        batch.defer(match, results)
        return results
    rows.insert_many(MatchResult, SCORE_COLUMNS, results)
    match.save(update_fields=PROJECTED_MATCH_FIELDS)
    return results


def bye_score(stage: Stage) -> tuple[int, int, bool]:
    """(VP, MP, won) of a bye as ``stage`` scores it: a set VP score, or a win by forfeit on
    the tournament's VP table."""
    if stage.bye_scoring == Stage.ByeScoring.SET_VP and stage.bye_vp is not None:
        return stage.bye_vp, 0, False
    try:
        table = vp_table_from_model(stage.tournament.vp_table)
    except TournamentError as error:
        raise ResultError(error.message) from error
    score = vp_algo.match_score(table, vp_algo.FORFEIT_MARGIN, vp_algo.Outcome.FORFEIT)
    return score.vp_winner, score.mp_winner, True


def _project_bye(match: Match) -> list[MatchResult]:
    """A bye's projection: one score row for the line that sat out, as its stage scores it."""
    line_id = match.home_id
    if line_id is None:  # pragma: no cover - save_bye checked the line
        raise ResultError(_("A bye is one line without an opponent."))
    vp, mp, won = bye_score(match.round.stage)
    result = MatchResult.objects.create(
        match=match, line_id=line_id, points=0, mp=mp, vp=vp, won=won
    )
    match.winner_id = line_id if won else None
    match.outcome = Outcome.BYE
    match.offender_id = None
    match.status = Match.Status.DONE
    match.has_tiebreak = False
    match.save(update_fields=PROJECTED_MATCH_FIELDS)
    return [result]
