"""Duplicate Scopa scoring: each line is scored against the others who held the same cards.

Plain functions over plain data (no Django). The input is one `BoardResult` per table that held
a board: the two lines, the deal's points of each side (or an adjusted score when the table
could not play it normally) and `deck`, which cards the table held ("" for the board as
prepared; another key for a misprepared deck, so those tables are compared only among
themselves). Two ways of scoring, the organizer's choice:

- matchpoints, as duplicate bridge does: on a board a line scores 2 for each line of its
  direction it beat on point difference and 1 for each tie; with N results compared where E
  were expected, Neuberg's formula S' = (S + 1) * E / N - 1 factors the score to the full top
  2 * (E - 1); an adjusted score is a percentage of that top (60 % to the side not at fault,
  40 % to the side at fault) and takes no part in the others' comparison;
- difference from the average, the Burraco "carte uguali" way: a line's point difference on the
  board minus the average difference of its direction among the tables that held the same
  cards; summed over a round and turned into VP by the organizer's table, scaled to the number
  of boards in the round.

Fractions keep every figure exact (Neuberg and averages divide), so a hand-worked example in
docs/tournament-core.md ("Duplicate") is reproduced digit for digit.
"""

from __future__ import annotations

import enum
import logging
import math
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Generic, TypeVar

from . import duplicate_movement
from .mitchell import Direction
from .vp import VPTable

logger = logging.getLogger(__name__)

L = TypeVar("L", bound=Hashable)

PREPARED = ""
"""The `deck` key of a table that held the board as prepared."""


class Fault(enum.StrEnum):
    """Who caused a board not to be played normally (the director's ruling)."""

    NEITHER = "neither"
    NORTH_SOUTH = "ns"
    EAST_WEST = "ew"
    BOTH = "both"


AVERAGE_PLUS = 60
AVERAGE_MINUS = 40


def adjusted_percentages(fault: Fault) -> tuple[int, int]:
    """(North-South %, East-West %) of the top: 60 to a side not at fault, 40 to one at fault."""
    ns = AVERAGE_MINUS if fault in (Fault.NORTH_SOUTH, Fault.BOTH) else AVERAGE_PLUS
    ew = AVERAGE_MINUS if fault in (Fault.EAST_WEST, Fault.BOTH) else AVERAGE_PLUS
    return ns, ew


@dataclass(frozen=True)
class BoardResult(Generic[L]):
    """One table's result on one board. `adjusted` is (NS %, EW %) of the top when the table
    could not play the board normally; then the points are None."""

    board: int
    table: int
    ns: L
    ew: L
    ns_points: int | None = None
    ew_points: int | None = None
    adjusted: tuple[int, int] | None = None
    deck: str = PREPARED

    def __post_init__(self) -> None:
        played = self.ns_points is not None and self.ew_points is not None
        if played == (self.adjusted is not None):
            raise ValueError("a board result has either both sides' points or an adjusted score")

    @property
    def difference(self) -> int:
        """North-South's point difference on the board (played results only)."""
        assert self.ns_points is not None and self.ew_points is not None
        return self.ns_points - self.ew_points


@dataclass(frozen=True)
class LineBoardScore(Generic[L]):
    """A line's score on one board: `score` out of `top` (matchpoints), or its difference from
    the average (then `top` is 0). `factored`: Neuberg changed it; `adjusted`: a ruling."""

    board: int
    line: L
    direction: Direction
    score: Fraction
    top: int = 0
    factored: bool = False
    adjusted: bool = False


def _by_board(results: Iterable[BoardResult[L]]) -> dict[int, list[BoardResult[L]]]:
    boards: dict[int, list[BoardResult[L]]] = defaultdict(list)
    for result in results:
        boards[result.board].append(result)
    return dict(sorted(boards.items()))


def _groups(results: Sequence[BoardResult[L]]) -> dict[str, list[BoardResult[L]]]:
    """The played results of one board by the cards the tables held."""
    groups: dict[str, list[BoardResult[L]]] = defaultdict(list)
    for result in results:
        if result.adjusted is None:
            groups[result.deck].append(result)
    return groups


def neuberg(score: Fraction | int, played: int, expected: int) -> Fraction:
    """S' = (S + 1) * E / N - 1 on the 2-per-beat scale (N played, E expected)."""
    if played < 1:
        raise ValueError("Neuberg needs at least one result compared")
    return (Fraction(score) + 1) * expected / played - 1


def raw_matchpoints(differences: Sequence[int]) -> list[int]:
    """2 per difference beaten, 1 per tie, each against the others of the list."""
    return [
        sum(2 if mine > other else 1 if mine == other else 0 for other in differences) - 1
        for mine in differences
    ]


def board_matchpoints(
    results: Sequence[BoardResult[L]], expected: int | None = None
) -> list[LineBoardScore[L]]:
    """Every line's matchpoints on one board. `expected`: the times the board should have been
    played (default: the number of tables that held it, adjusted ones included)."""
    board = results[0].board
    expected = len(results) if expected is None else expected
    top = 2 * (expected - 1)
    scores: list[LineBoardScore[L]] = []
    for group in _groups(results).values():
        ns_mp = raw_matchpoints([r.difference for r in group])
        ew_mp = raw_matchpoints([-r.difference for r in group])
        factored = len(group) != expected
        for result, ns, ew in zip(group, ns_mp, ew_mp, strict=True):
            if factored:
                ns_score, ew_score = (
                    neuberg(ns, len(group), expected),
                    neuberg(ew, len(group), expected),
                )
            else:
                ns_score, ew_score = Fraction(ns), Fraction(ew)
            scores.append(
                LineBoardScore(board, result.ns, Direction.NORTH_SOUTH, ns_score, top, factored)
            )
            scores.append(
                LineBoardScore(board, result.ew, Direction.EAST_WEST, ew_score, top, factored)
            )
    for result in results:
        if result.adjusted is not None:
            ns_pct, ew_pct = result.adjusted
            for line, direction, pct in (
                (result.ns, Direction.NORTH_SOUTH, ns_pct),
                (result.ew, Direction.EAST_WEST, ew_pct),
            ):
                score = Fraction(pct * top, 100)
                scores.append(LineBoardScore(board, line, direction, score, top, adjusted=True))
    return scores


def matchpoints(
    results: Iterable[BoardResult[L]], expected: Mapping[int, int] | None = None
) -> list[LineBoardScore[L]]:
    """Every line's matchpoints on every board (board by board, see `board_matchpoints`)."""
    expected = expected or {}
    scores: list[LineBoardScore[L]] = []
    for board, held in _by_board(results).items():
        scores.extend(board_matchpoints(held, expected.get(board)))
    return scores


def board_differences(results: Sequence[BoardResult[L]]) -> list[LineBoardScore[L]]:
    """Every line's difference from its direction's average on one board, among the tables
    that held the same cards. An adjusted score is placed on the same scale as matchpoints
    are: 60 % is a fifth of the way from the average to the best difference of its direction on
    the board (the top), 40 % a fifth of the way to minus that top; 0 when nobody played it."""
    board = results[0].board
    scores: list[LineBoardScore[L]] = []
    tops: dict[str, Fraction] = {}
    for deck, group in _groups(results).items():
        average = Fraction(sum(r.difference for r in group), len(group))
        deviations = [r.difference - average for r in group]
        tops[deck] = max(abs(d) for d in deviations)
        for result, deviation in zip(group, deviations, strict=True):
            scores.append(LineBoardScore(board, result.ns, Direction.NORTH_SOUTH, deviation))
            scores.append(LineBoardScore(board, result.ew, Direction.EAST_WEST, -deviation))
    for result in results:
        if result.adjusted is not None:
            top = tops.get(result.deck, Fraction(0))
            ns_pct, ew_pct = result.adjusted
            for line, direction, pct in (
                (result.ns, Direction.NORTH_SOUTH, ns_pct),
                (result.ew, Direction.EAST_WEST, ew_pct),
            ):
                score = Fraction(pct - 50, 50) * top
                scores.append(LineBoardScore(board, line, direction, score, adjusted=True))
    return scores


def differences(results: Iterable[BoardResult[L]]) -> list[LineBoardScore[L]]:
    """Every line's difference from the average on every board."""
    scores: list[LineBoardScore[L]] = []
    for held in _by_board(results).values():
        scores.extend(board_differences(held))
    return scores


@dataclass(frozen=True)
class LineTotal(Generic[L]):
    """A line's session: its score summed, the tops summed (matchpoints) and the percentage."""

    line: L
    direction: Direction
    score: Fraction
    top: int
    boards: int

    @property
    def percentage(self) -> Fraction:
        return Fraction(100) * self.score / self.top if self.top else Fraction(0)


def totals(scores: Iterable[LineBoardScore[L]]) -> dict[L, LineTotal[L]]:
    """Each line's total over the boards it held (its direction: the one of its first board;
    in a Howell a line plays both, and the direction shown is only where it started)."""
    summed: dict[L, LineTotal[L]] = {}
    for s in scores:
        before = summed.get(s.line)
        if before is None:
            summed[s.line] = LineTotal(s.line, s.direction, s.score, s.top, 1)
        else:
            summed[s.line] = LineTotal(
                s.line,
                before.direction,
                before.score + s.score,
                before.top + s.top,
                before.boards + 1,
            )
    return summed


def less_percent(
    line_totals: Mapping[L, LineTotal[L]], penalties: Mapping[L, int]
) -> dict[L, LineTotal[L]]:
    """Matchpoint totals after procedural penalties read in percent: a penalty of p takes p %
    of the line's tops off its matchpoints, so its session percentage drops by p points, however
    many boards it has played (a line without a board yet has no top to take from)."""
    out = dict(line_totals)
    for line, points in penalties.items():
        total = out.get(line)
        if total is None or not points:
            continue
        out[line] = replace(total, score=total.score - Fraction(points * total.top, 100))
    return out


def round_half_away(value: Fraction) -> int:
    """The nearest integer, halves away from zero (a referee's rounding, not banker's)."""
    magnitude = math.floor(abs(value) + Fraction(1, 2))
    return magnitude if value >= 0 else -magnitude


def scaled_margin(total: Fraction, boards: int, reference_boards: int) -> int:
    """A round's difference from the average as the margin of a `reference_boards` table:
    multiplied by sqrt(reference / boards), since the spread of a sum of board scores grows with
    the square root of their number (the scaling of the WBF's VP scales)."""
    if boards < 1 or reference_boards < 1:
        raise ValueError("a round has at least one board")
    if boards == reference_boards:
        return round_half_away(total)
    return round_half_away(total * Fraction(math.sqrt(reference_boards / boards)))


def vp_for_difference(
    total: Fraction, table: VPTable, boards: int, reference_boards: int | None = None
) -> int:
    """VP of a line whose differences from the average sum to `total` over a round of
    `boards` boards, on `table` (made for `reference_boards` deals; default: `boards`, no
    scaling): the winner's VP of the margin's row when above the average, the loser's below."""
    margin = scaled_margin(total, boards, reference_boards or boards)
    row = table.row_for_margin(abs(margin))
    return row.vp_winner if margin >= 0 else row.vp_loser


def round_vp(
    scores: Iterable[LineBoardScore[L]],
    movement: Iterable[Iterable[duplicate_movement.BoardTable[L]]],
    table: VPTable,
    reference_boards: int | None = None,
) -> dict[L, int]:
    """Each line's VP summed over the rounds it has scores in: its differences from the average
    on the boards of a round, summed, turned into VP (`vp_for_difference`, scaled from the
    round's boards to `reference_boards`)."""
    by_line_board = {(s.line, s.board): s.score for s in scores}
    vp: dict[L, int] = {}
    for tables in movement:
        for t in tables:
            if not t.plays:
                continue
            for line in (t.ns, t.ew):
                assert line is not None
                held = [by_line_board[line, b] for b in t.boards if (line, b) in by_line_board]
                if not held:
                    continue
                vp[line] = vp.get(line, 0) + vp_for_difference(
                    sum(held, Fraction(0)), table, len(t.boards), reference_boards
                )
    return vp


@dataclass(frozen=True)
class FieldRow(Generic[L]):
    """A line's place in its ranking against the field. `direction`: the ranking it is in
    (None: one overall ranking); `score`: matchpoints summed out of `top`, or its differences
    from the average summed; `vp`: with the difference method, the VP of its rounds."""

    line: L
    rank: int
    direction: Direction | None
    score: Fraction
    top: int
    boards: int
    vp: int | None = None
    shared_rank: bool = False

    @property
    def percentage(self) -> Fraction | None:
        """Matchpoints as a percentage of the tops (None with the difference method)."""
        if self.vp is not None:
            return None
        return Fraction(100) * self.score / self.top if self.top else Fraction(0)

    def key(self) -> tuple[Fraction, ...]:
        """What ranks the line, higher first: VP then the differences, or the percentage."""
        if self.vp is not None:
            return (Fraction(self.vp), self.score)
        assert self.percentage is not None
        return (self.percentage,)


def rank_field(
    lines: Sequence[L],
    line_totals: Mapping[L, LineTotal[L]],
    directions: Mapping[L, Direction] | None,
    vp: Mapping[L, int] | None = None,
) -> list[FieldRow[L]]:
    """The lines ranked against the field: one ranking per direction (`directions` says each
    line's; North-South first), or one overall when `directions` is None. By the percentage of
    matchpoints, or, when `vp` is given (the difference method), by VP then by the differences
    summed. Lines equal on that share a rank (listed in the order of `lines`); a line without a
    score yet ranks with 0."""
    rankings: dict[Direction | None, list[L]] = {}
    for line in lines:
        direction = directions[line] if directions is not None else None
        rankings.setdefault(direction, []).append(line)
    order = [Direction.NORTH_SOUTH, Direction.EAST_WEST, None]
    rows: list[FieldRow[L]] = []
    for direction in sorted(rankings, key=order.index):
        unranked = []
        for line in rankings[direction]:
            total = line_totals.get(line)
            unranked.append(
                FieldRow(
                    line,
                    0,
                    direction,
                    total.score if total else Fraction(0),
                    total.top if total else 0,
                    total.boards if total else 0,
                    None if vp is None else vp.get(line, 0),
                )
            )
        unranked.sort(key=FieldRow.key, reverse=True)  # stable: ties keep the order of `lines`
        for row in unranked:
            first = next(i for i, other in enumerate(unranked) if other.key() == row.key())
            tied = sum(1 for other in unranked if other.key() == row.key()) > 1
            rows.append(
                FieldRow(
                    row.line,
                    first + 1,
                    direction,
                    row.score,
                    row.top,
                    row.boards,
                    row.vp,
                    shared_rank=tied,
                )
            )
    return rows


def qualifiers(rows: Sequence[FieldRow[L]], count: int) -> list[L]:
    """The `count` lines a ranking against the field sends on, best seed first. One ranking:
    its top `count`. One per direction: place by place, the two directions' lines of that place
    (the better score first, North-South on equal scores), so the top count/2 of each direction
    go on (an odd last seat goes to the better of the next place) and the two winners are seeds
    1 and 2."""
    if count < 0:
        raise ValueError("a negative number of qualifiers")
    rankings: dict[Direction | None, list[FieldRow[L]]] = {}
    for row in rows:
        rankings.setdefault(row.direction, []).append(row)
    if len(rankings) <= 1:
        return [row.line for row in rows[:count]]
    ns = rankings.get(Direction.NORTH_SOUTH, [])
    ew = rankings.get(Direction.EAST_WEST, [])
    chosen: list[L] = []
    for place in range(max(len(ns), len(ew))):
        pair = [r[place] for r in (ns, ew) if place < len(r)]
        pair.sort(key=FieldRow.key, reverse=True)
        chosen.extend(row.line for row in pair)
    return chosen[:count]
