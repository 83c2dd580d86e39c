"""Deciding what a sheet amounts to: the engine's referee of a deal sheet and its match-end rule
(``scopa.sheet``, ``scopa.match_end``) asked for the match's variant and end rule, with their
answers put in the organizer's words. Also a verified record's verdict read as a decision, and
the progress of a sheet still being typed at the table.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from scopa import match_end, sheet
from scopa.variants import get_variant
from tournaments.algorithms import vp as vp_algo
from tournaments.exceptions import ResultError
from tournaments.models import (
    EndRule,
    Match,
    Outcome,
    Stage,
    engine_lang,
)
from tournaments.services.results.reading import (
    MAX_DEAL_POINTS,
    OFFENCE_OUTCOMES,
    PLAYED_OUTCOMES,
    Deal,
    Decision,
    parse_deals,
)

logger = logging.getLogger(__name__)


def _is_knockout(match: Match) -> bool:
    return match.round.stage.kind == Stage.Kind.KNOCKOUT


def _end_rule(match: Match) -> match_end.EndRule:
    """The engine's match-end rule for a two-line match of this tournament."""
    tournament = match.round.stage.tournament
    by_deals = tournament.end_rule == EndRule.DEALS
    return match_end.EndRule(
        target=None if by_deals else tournament.end_value,
        deals=tournament.end_value if by_deals else None,
        knockout=_is_knockout(match),
        sides=2,
        no_capture_loses=get_variant(tournament.variant).fifteen,
    )


def _side_names(match: Match) -> list[str]:
    return [
        getattr(match.home, "name", None) or str(_("home")),
        getattr(match.away, "name", None) or str(_("away")),
    ]


def _referee(match: Match, deals: list[Deal], offender_side: int | None) -> None:
    """The engine's deal-sheet referee on every deal: a deal that no play of the variant can give
    (a category to both lines, more than it gives, scope no deal holds...) is refused with the
    referee's sentences, before anything is stored."""
    tournament = match.round.stage.tournament
    lang = engine_lang()
    names = _side_names(match)
    for deal in deals:
        problems = sheet.check_deal(
            tournament.variant,
            tournament.options or {},
            tournament.seats,
            sheet.DealSheet(deal.breakdown, deal.is_penalty, offender_side),
        )
        if problems:
            label = _("Deal %(n)d") % {"n": deal.number + 1}
            sentences = "; ".join(problem.message(lang, names) for problem in problems[:3])
            raise ResultError(f"{label}: {sentences}.")


def _too_few(count: int) -> str:
    return ngettext(
        "The match is played over %(n)d deals; only %(got)d entered.",
        "The match is played over %(n)d deals; only %(got)d entered.",
        count,
    )


def _match_end_templates() -> dict[str, str | tuple[str, str]]:
    """The sentence of every match-end problem in the active language, its figures still to
    fill in (``%(n)d``...); a sentence that depends on a count, in its singular and plural."""
    return {
        "no_deals": _("Enter at least one deal."),
        "regular_after_tiebreak": _("Deal %(n)d: regular deals cannot follow tie-break deals."),
        "tiebreak_not_knockout": _("Tie-break deals are only played in knock-out matches."),
        "penalty_without_offence": _("Penalty points belong only to a timeout or an abandon."),
        "penalty_not_last": _("Only the last deal, the interrupted one, can carry penalty points."),
        "offender_missing": _("Say which line timed out, abandoned or forfeited."),
        "penalty_missing": _(
            "A timeout or abandon ends with the interrupted deal: mark the last deal as "
            "penalty (unsecured points and one scopa to the opponent)."
        ),
        "penalty_without_scopa": _(
            "The penalty gives the opponent of the offending line at least one scopa."
        ),
        "over_before": _("The match was already over after deal %(n)d (%(h)d–%(a)d)."),
        "tiebreak_decided_early": _("Tie-break deal %(n)d already decided the match."),
        "tiebreak_expected": _(
            "Deal %(n)d: the match was level before it, so it is a tie-break deal: mark it as one."
        ),
        "tiebreak_not_level": _("Tie-break deals are only played when the match ends level."),
        "knockout_level": _(
            "A knock-out match cannot end level: enter the tie-break deals (up to three)."
        ),
        "tiebreak_level": _("Tie-break deal %(n)d ended level: another tie-break deal is needed."),
        "last_capture_missing": _(
            "The third tie-break deal ended level: say which line made the last capture (it loses)."
        ),
        "too_few_deals": (_too_few(1), _too_few(2)),
        "level_when_time_ran_out": _(
            "Level when time ran out: further deals are played until one line is ahead."
        ),
        "level_at_target": _(
            "Level at %(h)d–%(a)d: further deals are played until one line is ahead."
        ),
        "not_finished": _(
            "The match is not finished: nobody has reached %(target)d points while ahead "
            "(%(h)d–%(a)d)."
        ),
    }


def _match_end_message(problem: match_end.MatchEndProblem) -> str:
    """The desk's sentence for why the engine finds the deals no finished match."""
    params = dict(problem.params)
    template = _match_end_templates().get(problem.code)
    if template is None:  # pragma: no cover - every engine code has its sentence above
        logger.error("no sentence for match-end problem %s", problem.code)
        return _("The deals do not make a finished match.")
    if isinstance(template, tuple):
        template = _too_few(params.get("got", 0))
    return template % params


def decide(
    match: Match,
    deals: list[Deal],
    *,
    outcome: str,
    offender_side: int | None = None,
    time_expired: bool = False,
) -> Decision:
    """Judge entered deals: the engine's sheet referee on each deal, then the engine's one
    match-end rule (``scopa.match_end``); raise ``ResultError`` if they do not make a
    finished match."""
    knockout = _is_knockout(match)
    outcome = Outcome(outcome)
    if outcome == Outcome.FORFEIT:
        if deals:
            raise ResultError(_("A forfeited match has no deals."))
        if offender_side not in (0, 1):
            raise ResultError(_("Say which line timed out, abandoned or forfeited."))
        winner = 1 - offender_side
        totals = [0, 0]
        totals[winner] = vp_algo.FORFEIT_MARGIN
        return Decision(
            (totals[0], totals[1]), winner, vp_algo.FORFEIT_MARGIN, outcome, offender_side
        )
    if outcome not in PLAYED_OUTCOMES:
        raise ResultError(_("Unknown outcome."))
    _referee(match, deals, offender_side if outcome != Outcome.COMPLETED else None)
    tournament = match.round.stage.tournament
    sheet_deals = [
        match_end.SheetDeal(deal.points, deal.is_tiebreak, deal.is_penalty, deal.last_capture)
        for deal in deals
    ]
    sheet_outcome: match_end.SheetOutcome = "completed"
    if outcome == Outcome.TIMEOUT:
        sheet_outcome = "timeout"
    elif outcome == Outcome.ABANDON:
        sheet_outcome = "abandon"
    try:
        judged = match_end.judge_sheet(
            _end_rule(match),
            sheet_deals,
            outcome=sheet_outcome,
            offender=offender_side,
            time_expired=bool(time_expired and tournament.time_limit_s),
        )
    except match_end.SheetRefused as refusal:
        raise ResultError(_match_end_message(refusal.problem)) from refusal
    if judged.winner is None and knockout:  # pragma: no cover - the engine never draws one
        raise ResultError(_("A knock-out match cannot end level."))
    offender = offender_side if outcome != Outcome.COMPLETED else None
    final = (judged.totals[0], judged.totals[1])
    return Decision(final, judged.winner, judged.margin, outcome, offender, deals)


def decision_from_verdict(match: Match, verdict: object) -> Decision:
    """Turn a ``scopa.verify_document`` verdict into a Decision (side 0 = home)."""
    if not isinstance(verdict, dict):
        raise ResultError(_("The verdict is not readable."))
    if verdict.get("valid") is False:
        raise ResultError(_("The record is not valid: its result cannot be stored."))
    totals = verdict.get("totals")
    if not isinstance(totals, list | tuple) or len(totals) != 2:
        raise ResultError(_("A tournament match has exactly two lines."))
    if verdict.get("sides", 2) != 2:
        raise ResultError(_("A tournament match has exactly two lines."))
    deals = []
    for index, raw in enumerate(verdict.get("deals") or []):
        if not isinstance(raw, dict) or raw.get("void"):
            continue
        home_points, away_points = (int(p) for p in raw.get("points", (0, 0)))
        home_breakdown, away_breakdown = (
            {key: int(value) for key, value in dict(side).items() if value}
            for side in raw.get("breakdown") or [{}, {}]
        )
        deals.append(
            Deal(
                number=index,
                points=(home_points, away_points),
                breakdown=(home_breakdown, away_breakdown),
                is_tiebreak=bool(raw.get("tiebreak", False)),
                is_penalty=bool(raw.get("interrupted") or raw.get("penalty")),
            )
        )
    outcome_info = verdict.get("outcome") or {}
    kind = outcome_info.get("kind") or "completed"
    try:
        outcome = Outcome(kind)
    except ValueError as error:
        raise ResultError(_("Unknown outcome “%(kind)s”.") % {"kind": kind}) from error
    offender_side = outcome_info.get("side") if outcome in OFFENCE_OUTCOMES else None
    if outcome in OFFENCE_OUTCOMES:
        if offender_side not in (0, 1):
            raise ResultError(_("The verdict does not say which line timed out or abandoned."))
        # The interrupted deal carries the penalty (unsecured points + one scopa); an engine
        # that reports the penalty apart from the deals gets it added to that deal (or to a deal
        # of its own when none was under way), so deals always add up to the totals.
        interrupted = next((d for d in deals if d.is_penalty), None)
        penalty = verdict.get("penalty") or {}
        extra = [int(p) for p in penalty.get("points") or (0, 0)]
        sums = [sum(d.points[side] for d in deals) for side in (0, 1)]
        if sums != [int(t) for t in totals] and [
            a + b for a, b in zip(sums, extra, strict=True)
        ] == [int(t) for t in totals]:
            if interrupted is None:
                interrupted = Deal(
                    number=len(verdict.get("deals") or []),
                    points=(0, 0),
                    breakdown=({}, {}),
                    is_penalty=True,
                )
                deals.append(interrupted)
            points = list(interrupted.points)
            for side in (0, 1):
                if extra[side]:
                    points[side] += extra[side]
                    interrupted.breakdown[side]["penalty"] = (
                        interrupted.breakdown[side].get("penalty", 0) + extra[side]
                    )
            interrupted.points = (points[0], points[1])
        elif interrupted is None and deals:
            deals[-1].is_penalty = True
    winner = verdict.get("winner")
    if winner not in (0, 1, None):
        raise ResultError(_("The verdict names no valid winner."))
    if winner is None and _is_knockout(match):
        raise ResultError(_("A knock-out match cannot end level."))
    if winner is None and outcome != Outcome.COMPLETED:
        raise ResultError(_("A timeout or abandon always has a winner."))
    if sum(d.points[0] for d in deals) != totals[0] or sum(d.points[1] for d in deals) != totals[1]:
        raise ResultError(_("The verdict's deals do not add up to its totals."))
    margin = verdict.get("margin")
    if margin is None:
        margin = match_end.margin([int(t) for t in totals], winner)
    return Decision(
        (int(totals[0]), int(totals[1])),
        winner,
        int(margin),
        outcome,
        offender_side,
        deals,
    )


# Codes of the match-end rule that only say the sheet is not finished yet (more deals to type,
# a tie-break deal to play, the last capture to say), not that it is impossible.
_ONGOING = {
    "no_deals",
    "not_finished",
    "too_few_deals",
    "knockout_level",
    "tiebreak_level",
    "level_at_target",
    "level_when_time_ran_out",
    "last_capture_missing",
}


@dataclass
class SheetProgress:
    """A sheet as typed so far, as the referee reads it: running totals, whether the match is
    over (and who won), the sentence to show, and what the next deal must be."""

    totals: tuple[int, int]
    over: bool
    winner_side: int | None
    sentence: str
    next_tiebreak: bool = False
    needs_last_capture: bool = False
    deals: int = 0


def sheet_progress(match: Match, deals: object, *, time_expired: bool = False) -> SheetProgress:
    """Judge a sheet while it is typed (nothing is stored): the same referee as
    :func:`decide`; an impossible sheet raises ``ResultError`` with the referee's sentence,
    one that is only unfinished says what is missing."""
    parsed = parse_deals(deals)
    _referee(match, parsed, None)
    totals = (sum(d.points[0] for d in parsed), sum(d.points[1] for d in parsed))
    tournament = match.round.stage.tournament
    try:
        judged = match_end.judge_sheet(
            _end_rule(match),
            [
                match_end.SheetDeal(d.points, d.is_tiebreak, d.is_penalty, d.last_capture)
                for d in parsed
            ],
            time_expired=bool(time_expired and tournament.time_limit_s),
        )
    except match_end.SheetRefused as refusal:
        code = refusal.problem.code
        sentence = _match_end_message(refusal.problem)
        if code not in _ONGOING:
            raise ResultError(sentence) from refusal
        return SheetProgress(
            totals,
            False,
            None,
            sentence,
            next_tiebreak=code in ("knockout_level", "tiebreak_level"),
            needs_last_capture=code == "last_capture_missing",
            deals=len(parsed),
        )
    names = _side_names(match)
    if judged.winner is None:
        sentence = _draw_sentence() % {"h": totals[0], "a": totals[1]}
    else:
        sentence = _win_sentence() % {
            "line": names[judged.winner],
            "h": judged.totals[0],
            "a": judged.totals[1],
        }
    return SheetProgress(totals, True, judged.winner, sentence, deals=len(parsed))


def _draw_sentence() -> str:
    return _("Match over: a draw, %(h)d–%(a)d.")


def _win_sentence() -> str:
    return _("Match over: %(line)s wins %(h)d–%(a)d.")


def offline_referee(match: Match) -> dict[str, object]:
    """Everything the phone needs to read a sheet as :func:`sheet_progress` does without the
    server (``public/static/js/sheet-referee.js``, on the players' page offline), as JSON data:
    the engine's deal-sheet referee and match-end rule for this match, generated from its
    registry, with the sentences in the active language. The phone's reading is a courtesy; the
    server referees the sheet when it arrives."""
    tournament = match.round.stage.tournament
    deal_label = _("Deal %(n)d")
    return {
        "table": sheet.referee_table(
            tournament.variant, tournament.options or {}, tournament.seats
        ),
        "rule": match_end.rule_table(_end_rule(match)),
        "time_limited": bool(tournament.time_limit_s),
        "lang": engine_lang(),
        "names": _side_names(match),
        "ongoing": sorted(_ONGOING),
        "max_points": MAX_DEAL_POINTS,
        "sentences": {
            "deal": deal_label,
            "points": _("%(deal)s: points"),
            "not_whole": _("%(what)s must be a whole number."),
            "too_big": _("%(what)s: %(value)d is more than a deal can score (at most %(max)d)."),
            "problems": _match_end_templates(),
            "draw": _draw_sentence(),
            "win": _win_sentence(),
        },
    }
