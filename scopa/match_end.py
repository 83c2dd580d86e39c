"""The one match-end rule (docs/match-record.md, "End of the match"), for a replayed record and
for a hand-entered sheet alike.

`MatchProgress` follows a match deal by deal: target reached while strictly ahead, N deals, the time
limit (the side ahead when time runs out wins; a tie plays on, except in a knock-out where it
goes to the tie-break deals), up to `TIEBREAK_DEALS` tie-break deals and the last-capture rule,
and scopa-15's "a side that made no capture loses". The verifier (`verify.py`) feeds it replayed
deals; `judge_sheet` feeds it the deals an organizer typed and says what does not add up, with a
stable code the caller turns into its sentence. Timeout and abandon are settled by
`penalty_winner` on top of it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from .verdict import EndReason

logger = logging.getLogger(__name__)

TIEBREAK_DEALS = 3
"""Tie-break deals (spareggi) of a knock-out match that ends level (seed 000, "Parità")."""

Phase = Literal["regular", "tiebreak"]
SheetOutcome = Literal["completed", "timeout", "abandon"]


@dataclass(frozen=True, slots=True)
class EndRule:
    """How a match ends: exactly one of `target` points or `deals`; `knockout` matches cannot be
    drawn; `no_capture_loses` is scopa-15's rule."""

    target: int | None = None
    deals: int | None = None
    knockout: bool = False
    sides: int = 2
    no_capture_loses: bool = False


@dataclass(frozen=True, slots=True)
class DealTally:
    """What the match-end rule needs to know about one finished deal.

    `captured`: whether each side made a capture (None when not known, as on a hand sheet).
    `last_capture_at`: when each side last captured (play index, None: never); a hand sheet
    gives only the order, as 1 for the side that made the deal's last capture and 0 for the
    other. None when not known.
    """

    points: tuple[int, ...]
    captured: tuple[bool, ...] | None = None
    last_capture_at: tuple[int | None, ...] | None = None


def leaders(totals: Sequence[int]) -> list[int]:
    """The sides with the highest total."""
    best = max(totals)
    return [side for side, total in enumerate(totals) if total == best]


def margin(totals: Sequence[int], winner: int | None) -> int:
    """The winner's total minus the best other total, never below 0; 0 without a winner."""
    if winner is None:
        return 0
    others = [total for side, total in enumerate(totals) if side != winner]
    return max(0, totals[winner] - max(others)) if others else 0


def penalty_winner(totals: Sequence[int], offender: int) -> int | None:
    """Timeout or abandon: the best of the other sides (after the penalty) wins; None if they
    are level (three sides only)."""
    others = [side for side in range(len(totals)) if side != offender]
    best = max(totals[side] for side in others)
    top = [side for side in others if totals[side] == best]
    return top[0] if len(top) == 1 else None


def last_capture_survivor(
    last_capture_at: Sequence[int | None], contenders: Sequence[int]
) -> int | None:
    """Third tie-break deal still tied: drop the contender whose latest capture came last, until
    one remains (a side that never captured counts as earliest); None when it cannot tell."""

    def when(side: int) -> int:
        at = last_capture_at[side]
        return -2 if at is None else at

    order = sorted(contenders, key=when)
    first = order[0]
    if len(order) > 1 and last_capture_at[order[1]] == last_capture_at[first]:
        return None
    return first


class MatchProgress:
    """Running state of the match-end rule between deals.

    The caller adds each deal's points to `totals` (`add_points`) and then calls `after_deal`,
    or does both with `add_deal`; an interrupted deal only has its points added.
    """

    def __init__(self, rule: EndRule, time_up: int | None = None) -> None:
        self.rule = rule
        self.target = rule.target
        self.deal_limit = rule.deals
        self.time_up = time_up
        """Index of the deal in which playing time ran out (None: it did not)."""
        self.knockout = rule.knockout
        self.side_count = rule.sides
        self.totals: list[int] = [0] * rule.sides
        self.phase: Phase = "regular"
        self.regular_deals = 0
        self.tiebreaks = 0
        self.contenders: list[int] = []
        self.over = False
        self.winner: int | None = None
        self.reason: EndReason | None = None
        self.end_deal: int | None = None
        self.needs_last_capture = False
        """The third tie-break deal ended level and the tally did not say who captured last."""

    def _finish(self, d: int, winner: int | None, reason: EndReason) -> None:
        self.over, self.winner, self.reason, self.end_deal = True, winner, reason, d

    def leaders(self) -> list[int]:
        return leaders(self.totals)

    def add_points(self, points: Sequence[int]) -> None:
        for side in range(self.side_count):
            self.totals[side] += points[side]

    def add_deal(self, d: int, tally: DealTally) -> None:
        self.add_points(tally.points)
        self.after_deal(d, tally)

    def after_deal(self, d: int, tally: DealTally) -> None:
        """Apply the rule after deal `d`, whose points are already in `totals`."""
        if self.over:
            return
        if self.rule.no_capture_loses and tally.captured is not None:
            without = [s for s in range(self.side_count) if not tally.captured[s]]
            if without:
                capturers = [s for s in range(self.side_count) if s not in without]
                winner = None
                if capturers:
                    best = max(self.totals[s] for s in capturers)
                    top = [s for s in capturers if self.totals[s] == best]
                    winner = top[0] if len(top) == 1 else None
                self._finish(d, winner, EndReason.NO_CAPTURE)
                return
        if self.phase == "tiebreak":
            self._after_tiebreak(d, tally)
            return
        self.regular_deals += 1
        tied = self.leaders()
        single = tied[0] if len(tied) == 1 else None
        if self.target is not None and single is not None and self.totals[single] >= self.target:
            self._finish(d, single, EndReason.TARGET)
            return
        if self.time_up is not None and d >= self.time_up:
            if single is not None:
                self._finish(d, single, EndReason.TIME_LIMIT)
            elif self.knockout:
                # a knock-out never plays on when time is up: the tie-break deals settle it
                self._start_tiebreaks(tied)
            return
        if self.deal_limit is not None and self.regular_deals >= self.deal_limit:
            if single is not None:
                self._finish(d, single, EndReason.DEALS)
            elif self.knockout:
                self._start_tiebreaks(tied)
            else:
                self._finish(d, None, EndReason.DRAW)

    def _start_tiebreaks(self, tied: list[int]) -> None:
        self.phase = "tiebreak"
        self.contenders = tied

    def _after_tiebreak(self, d: int, tally: DealTally) -> None:
        self.tiebreaks += 1
        best = max(tally.points[s] for s in self.contenders)
        top = [s for s in self.contenders if tally.points[s] == best]
        if len(top) == 1:
            self._finish(d, top[0], EndReason.TIEBREAK)
            return
        self.contenders = top
        if self.tiebreaks >= TIEBREAK_DEALS:
            if tally.last_capture_at is None:
                self.needs_last_capture = True
                return
            self._finish(
                d,
                last_capture_survivor(tally.last_capture_at, top),
                EndReason.TIEBREAK_LAST_CAPTURE,
            )

    def reasons(self) -> tuple[str, str]:
        """Why the match is (not) over, in Italian and English, for the referee's sentences."""
        if self.over:
            if self.winner is None:
                return (
                    f"pareggio alla smazzata {self.end_deal}",
                    f"drawn at deal {self.end_deal}",
                )
            return (
                f"vinta dalla squadra {self.winner} alla smazzata {self.end_deal}",
                f"won by side {self.winner} at deal {self.end_deal}",
            )
        if self.phase == "tiebreak":
            return (
                f"spareggio {self.tiebreaks + 1} da giocare",
                f"tie-break deal {self.tiebreaks + 1} to play",
            )
        if self.target is not None:
            return (
                f"nessuna squadra è in testa da sola con almeno {self.target} punti",
                f"no side leads alone with at least {self.target} points",
            )
        return (
            f"smazzate giocate: {self.regular_deals} su {self.deal_limit}",
            f"{self.regular_deals} of {self.deal_limit} deals played",
        )


# --------------------------------------------------------------------------- hand sheets


@dataclass(frozen=True, slots=True)
class SheetDeal:
    """One hand-entered deal as the match-end rule reads it (side 0 = home)."""

    points: tuple[int, ...]
    tiebreak: bool = False
    penalty: bool = False
    last_capture: int | None = None
    """Only for a level third tie-break deal: the side that made its last capture (it loses)."""


@dataclass(frozen=True, slots=True)
class MatchEndProblem:
    """Why a sheet is not a finished match: a stable `code`, the 0-based `deal` it is about (or
    None) and the figures of the sentence (`n` is the 1-based number the sentence shows)."""

    code: str
    deal: int | None = None
    params: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class MatchDecision:
    """What a sheet amounts to."""

    totals: tuple[int, ...]
    winner: int | None
    margin: int
    reason: EndReason
    end_deal: int | None


class SheetRefused(Exception):
    """A hand sheet that is not a finished match; `problem` says why."""

    def __init__(self, problem: MatchEndProblem) -> None:
        self.problem = problem
        super().__init__(problem.code)


def _tally(deal: SheetDeal) -> DealTally:
    last_capture_at: tuple[int | None, ...] | None = None
    if deal.last_capture is not None:
        last_capture_at = tuple(
            1 if side == deal.last_capture else 0 for side in range(len(deal.points))
        )
    return DealTally(deal.points, None, last_capture_at)


def _totals_after(deals: Sequence[SheetDeal], sides: int) -> list[tuple[int, ...]]:
    running = [0] * sides
    after = []
    for deal in deals:
        for side in range(sides):
            running[side] += deal.points[side]
        after.append(tuple(running))
    return after


def sheet_time_up(rule: EndRule, deals: Sequence[SheetDeal]) -> int:
    """The deal in which time ran out, for a sheet that only says it did.

    A knock-out stops at the deal in progress (the last regular one). Otherwise a tie when time
    ran out was played on until one side was ahead, so time ran out in the first deal of the
    run of level totals that precedes the last regular deal (or in that deal).
    """
    regular = [deal for deal in deals if not deal.tiebreak]
    last = len(regular) - 1
    if rule.knockout or last <= 0:
        return max(last, 0)
    after = _totals_after(regular, rule.sides)
    first = last
    while first > 0 and len(set(after[first - 1])) == 1:
        first -= 1
    return first


def judge_sheet(
    rule: EndRule,
    deals: Sequence[SheetDeal],
    *,
    outcome: SheetOutcome = "completed",
    offender: int | None = None,
    time_expired: bool = False,
) -> MatchDecision:
    """Apply the match-end rule to a hand-entered sheet; raise `SheetRefused` if the deals do not
    make a finished match (played on after the end, stopped before it, tie-break deals where
    none are played, a penalty deal without a timeout...)."""
    if not deals:
        raise SheetRefused(MatchEndProblem("no_deals"))
    seen_tiebreak = False
    for index, deal in enumerate(deals):
        if seen_tiebreak and not deal.tiebreak:
            raise SheetRefused(MatchEndProblem("regular_after_tiebreak", index, {"n": index + 1}))
        seen_tiebreak = seen_tiebreak or deal.tiebreak
    if seen_tiebreak and not rule.knockout:
        raise SheetRefused(MatchEndProblem("tiebreak_not_knockout"))
    penalties = [index for index, deal in enumerate(deals) if deal.penalty]
    if penalties and outcome == "completed":
        raise SheetRefused(MatchEndProblem("penalty_without_offence"))
    if len(penalties) > 1 or (penalties and penalties[0] != len(deals) - 1):
        raise SheetRefused(MatchEndProblem("penalty_not_last"))
    if outcome != "completed":
        return _judge_interrupted(rule, deals, outcome, offender)

    match = MatchProgress(rule, sheet_time_up(rule, deals) if time_expired else None)
    for index, deal in enumerate(deals):
        if match.over:
            raise SheetRefused(_over_before(match, index))
        if deal.tiebreak and match.phase != "tiebreak":
            raise SheetRefused(_not_finished(match, rule, time_expired, tiebreak_at=index))
        if not deal.tiebreak and match.phase == "tiebreak":
            raise SheetRefused(MatchEndProblem("tiebreak_expected", index, {"n": index + 1}))
        match.add_deal(index, _tally(deal))
        if match.needs_last_capture:
            raise SheetRefused(MatchEndProblem("last_capture_missing", index, {"n": index + 1}))
    if not match.over:
        raise SheetRefused(_not_finished(match, rule, time_expired))
    assert match.reason is not None
    totals = tuple(match.totals)
    return MatchDecision(
        totals, match.winner, margin(totals, match.winner), match.reason, match.end_deal
    )


def _over_before(match: MatchProgress, index: int) -> MatchEndProblem:
    end = match.end_deal if match.end_deal is not None else index - 1
    home, away = match.totals[0], match.totals[1]
    if match.phase == "tiebreak":
        return MatchEndProblem(
            "tiebreak_decided_early", end, {"n": match.tiebreaks, "h": home, "a": away}
        )
    return MatchEndProblem(
        "over_before", end, {"n": end + 1, "h": home, "a": away, "next": index + 1}
    )


def _not_finished(
    match: MatchProgress, rule: EndRule, time_expired: bool, tiebreak_at: int | None = None
) -> MatchEndProblem:
    home, away = match.totals[0], match.totals[1]
    if match.phase == "tiebreak":
        if match.tiebreaks == 0:
            return MatchEndProblem("knockout_level", None, {"n": TIEBREAK_DEALS})
        return MatchEndProblem("tiebreak_level", None, {"n": match.tiebreaks})
    if tiebreak_at is not None and not match.over:
        return MatchEndProblem(
            "tiebreak_not_level", tiebreak_at, {"n": tiebreak_at + 1, "h": home, "a": away}
        )
    if rule.deals is not None and match.regular_deals < rule.deals and not time_expired:
        return MatchEndProblem("too_few_deals", None, {"n": rule.deals, "got": match.regular_deals})
    if time_expired and home == away:
        return MatchEndProblem("level_when_time_ran_out", None, {"h": home, "a": away})
    if rule.target is not None and home == away and home >= rule.target:
        return MatchEndProblem("level_at_target", None, {"h": home, "a": away})
    target = rule.target if rule.target is not None else 0
    return MatchEndProblem("not_finished", None, {"target": target, "h": home, "a": away})


def _judge_interrupted(
    rule: EndRule, deals: Sequence[SheetDeal], outcome: SheetOutcome, offender: int | None
) -> MatchDecision:
    if offender is None or not 0 <= offender < rule.sides:
        raise SheetRefused(MatchEndProblem("offender_missing"))
    if not deals[-1].penalty:
        raise SheetRefused(MatchEndProblem("penalty_missing"))
    last = deals[-1]
    if any(last.points[side] < 1 for side in range(rule.sides) if side != offender):
        raise SheetRefused(MatchEndProblem("penalty_without_scopa"))
    match = MatchProgress(rule, None)
    for index, deal in enumerate(deals[:-1]):
        if deal.tiebreak != (match.phase == "tiebreak"):
            problem = "tiebreak_expected" if match.phase == "tiebreak" else "tiebreak_not_level"
            raise SheetRefused(MatchEndProblem(problem, index, {"n": index + 1}))
        match.add_deal(index, _tally(deal))
        if match.over or match.needs_last_capture:
            home, away = match.totals[0], match.totals[1]
            raise SheetRefused(
                MatchEndProblem(
                    "over_before", index, {"n": index + 1, "h": home, "a": away, "next": index + 2}
                )
            )
    match.add_points(last.points)
    totals = tuple(match.totals)
    winner = penalty_winner(totals, offender)
    reason = EndReason.TIMEOUT if outcome == "timeout" else EndReason.ABANDON
    return MatchDecision(totals, winner, margin(totals, winner), reason, len(deals) - 1)


def rule_table(rule: EndRule) -> dict[str, object]:
    """One match's end rule as plain JSON data, with the figures `judge_sheet` uses: what a port
    of it (`public/static/js/sheet-referee.js`, the players' phone offline) reads instead of
    copying them. `no_capture_loses` is left out: a hand sheet never says who captured."""
    return {
        "target": rule.target,
        "deals": rule.deals,
        "knockout": rule.knockout,
        "sides": rule.sides,
        "tiebreak_deals": TIEBREAK_DEALS,
        "reasons": {reason.name: reason.value for reason in EndReason},
    }
