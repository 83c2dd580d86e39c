"""Group standings: VP first, then the tournament's ordered tie-breaks (vp-tables.md).

Each tie-break only splits the lines that are still tied after VP and the earlier tie-breaks;
head-to-head is computed among exactly those lines. Lines still tied after every criterion share
a rank. The drawing of lots is reproducible from the stored ``lots_seed``.

Readings: ``strength`` (Sonneborn-Berger style) is the sum, over the line's wins, of the beaten
opponent's VP total in this group (a line beaten twice counts twice; draws count nothing, the
spec's "sum of beaten opponents' VP"). Forfeits, timeouts and abandons count as played matches
with a winner; byes do not count at all (neither played nor VP). Head-to-head is the VP a line
earned in its matches against the other still-tied lines.

Cost: one pass over the matches, then one sort per criterion of each still-tied subset, i.e.
O(matches + lines·log lines) per criterion.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from . import swiss_tiebreaks
from .vp import MatchScore, Outcome

# Whatever identifies a line (the ORM layer passes primary keys, tests letters): the functions
# are generic in it, so a caller gets back rows keyed by the ids it passed in.
LineId = TypeVar("LineId", bound=Hashable)


def gettext_noop(message: str) -> str:
    """Marks a label for the translation catalog; the caller translates it when shown."""
    return message


class TieBreak(enum.StrEnum):
    """Tie-breaks a tournament may order (values stored in the database); each has its entry,
    label and computation, in :data:`TIEBREAKS` below."""

    MP = "mp"
    HEAD_TO_HEAD = "head_to_head"
    POINTS_SCORED = "points_scored"
    MATCHES_WON = "matches_won"
    STRENGTH = "strength"
    RATING = "rating"
    LOTS = "lots"
    BUCHHOLZ = "buchholz"  # the Swiss tie-breaks: tournaments.algorithms.swiss_tiebreaks
    BUCHHOLZ_CUT1 = "buchholz_cut1"
    SONNEBORN_BERGER = "sonneborn_berger"
    PROGRESSIVE = "progressive"


@dataclass(frozen=True)
class PlayedMatch(Generic[LineId]):
    """A match of the group as the ORM layer hands it over.

    ``winner`` is ``None`` for a draw; ``away`` may be ``None`` for a bye. Byes are ignored.
    """

    home: LineId
    away: LineId | None
    home_points: int
    away_points: int
    home_vp: int
    away_vp: int
    home_mp: int
    away_mp: int
    winner: LineId | None
    outcome: Outcome = Outcome.COMPLETED
    round_number: int = 0  # order of play, for the progressive score

    @classmethod
    def from_score(
        cls,
        home: LineId,
        away: LineId,
        points: tuple[int, int],
        score: MatchScore,
        *,
        winner: LineId | None,
        outcome: Outcome = Outcome.COMPLETED,
        round_number: int = 0,
    ) -> PlayedMatch[LineId]:
        """The match from its final ``points`` (home, away) and the VP table's ``score``.

        ``score`` names the winner's and the loser's VP and MP (what ``match_score`` returns);
        this is the one place that turns them into home and away values. Without a winner the
        home side takes the "winner" values: a draw's score is the same for both sides.
        """
        if winner is not None and winner not in (home, away):
            raise ValueError(f"match {home} v {away}: winner {winner!r} did not play it")
        won, lost = (score.vp_winner, score.mp_winner), (score.vp_loser, score.mp_loser)
        (home_vp, home_mp), (away_vp, away_mp) = (
            (won, lost) if winner is None or winner == home else (lost, won)
        )
        return cls(
            home=home,
            away=away,
            home_points=points[0],
            away_points=points[1],
            home_vp=home_vp,
            away_vp=away_vp,
            home_mp=home_mp,
            away_mp=away_mp,
            winner=winner,
            outcome=outcome,
            round_number=round_number,
        )


@dataclass(frozen=True)
class StandingRow(Generic[LineId]):
    """One line's place and totals; ``tiebreak_values`` holds one value per requested tie-break.

    Head-to-head and lots are only meaningful among tied lines: they are ``None`` for a line that
    was no longer tied when that criterion came up. ``shared_rank`` marks lines tied on every
    criterion (they share the rank of the first of them).
    """

    line_id: LineId
    rank: int
    played: int
    won: int
    drawn: int
    lost: int
    vp: int
    mp: int
    points_scored: int
    points_conceded: int
    tiebreak_values: dict[TieBreak, Any] = field(default_factory=dict)
    shared_rank: bool = False
    penalty: int = 0  # VP taken off by penalties; ``vp`` is already net of them


@dataclass
class _Totals(Generic[LineId]):
    played: int = 0
    won: int = 0
    drawn: int = 0
    lost: int = 0
    vp: int = 0
    mp: int = 0
    points_scored: int = 0
    points_conceded: int = 0
    # (opponent, VP earned against them) per meeting, and the opponents beaten (one per win)
    meetings: list[tuple[LineId, int]] = field(default_factory=list)
    beaten: list[LineId] = field(default_factory=list)
    drawn_with: list[LineId] = field(default_factory=list)
    vp_by_round: list[tuple[int, int]] = field(default_factory=list)


@dataclass(frozen=True)
class TieBreakContext(Generic[LineId]):
    """What a tie-break computation may read: every line's totals, ratings, the lots seed."""

    totals: Mapping[LineId, _Totals[LineId]]
    ratings: Mapping[LineId, float]
    lots_seed: int


# The registry holds tie-breaks for any kind of line id, so its functions take Any ids.
TieBreakValues = Callable[[TieBreakContext[Any], Sequence[Any]], dict[Any, Any]]
"""(context, lines) → each line's value; higher values rank first."""


@dataclass(frozen=True)
class TieBreakMetric:
    """One tie-break: stored key, label (a msgid the caller translates) and computation.

    ``among_tied``: computed only among the lines still tied when it comes up (its shown value
    is ``None`` for the others). ``sort_key`` turns a value into an order, higher first.
    """

    key: TieBreak
    label: str
    values: TieBreakValues
    among_tied: bool = False
    sort_key: Callable[[Any], Any] = lambda value: value


def _head_to_head(context: TieBreakContext[Any], lines: Sequence[Any]) -> dict[Any, Any]:
    members = set(lines)
    return {
        line: sum(vp for opponent, vp in context.totals[line].meetings if opponent in members)
        for line in lines
    }


def _strength(context: TieBreakContext[Any], lines: Sequence[Any]) -> dict[Any, Any]:
    totals = context.totals
    return {line: sum(totals[beaten].vp for beaten in totals[line].beaten) for line in lines}


def _swiss(key: TieBreak) -> TieBreakValues:
    def values(context: TieBreakContext[Any], lines: Sequence[Any]) -> dict[Any, Any]:
        computed = swiss_tiebreaks.SWISS_TIEBREAKS[key](
            swiss_tiebreaks.SwissTotals.of(context.totals)
        )
        return {line: computed[line] for line in lines}

    return values


def _rating_order(value: Any) -> tuple[int, float]:
    return (0, 0.0) if value is None else (1, value)


def _lots_order(value: Any) -> int:
    return -int(value)


TIEBREAKS: Mapping[TieBreak, TieBreakMetric] = {
    metric.key: metric
    for metric in (
        TieBreakMetric(
            TieBreak.MP,
            gettext_noop("MP total"),
            lambda context, lines: {line: context.totals[line].mp for line in lines},
        ),
        # VP earned against the other still-tied lines
        TieBreakMetric(
            TieBreak.HEAD_TO_HEAD, gettext_noop("Head-to-head VP"), _head_to_head, among_tied=True
        ),
        # game points scored, all matches
        TieBreakMetric(
            TieBreak.POINTS_SCORED,
            gettext_noop("Points scored"),
            lambda context, lines: {line: context.totals[line].points_scored for line in lines},
        ),
        TieBreakMetric(
            TieBreak.MATCHES_WON,
            gettext_noop("Matches won"),
            lambda context, lines: {line: context.totals[line].won for line in lines},
        ),
        # sum of the VP totals of the opponents beaten (one term per win)
        TieBreakMetric(
            TieBreak.STRENGTH, gettext_noop("Strength (beaten opponents' VP)"), _strength
        ),
        # higher rating first; a line without rating comes last
        TieBreakMetric(
            TieBreak.RATING,
            gettext_noop("Rating"),
            lambda context, lines: {line: context.ratings.get(line) for line in lines},
            sort_key=_rating_order,
        ),
        # drawing of lots, seeded: 1 is the luckiest
        TieBreakMetric(
            TieBreak.LOTS,
            gettext_noop("Drawing of lots"),
            lambda context, lines: draw_lots(lines, context.lots_seed),
            among_tied=True,
            sort_key=_lots_order,
        ),
        # Swiss tie-breaks on VP (FIDE's list): tournaments.algorithms.swiss_tiebreaks
        TieBreakMetric(
            TieBreak.BUCHHOLZ, gettext_noop("Buchholz (opponents' VP)"), _swiss(TieBreak.BUCHHOLZ)
        ),
        TieBreakMetric(
            TieBreak.BUCHHOLZ_CUT1, gettext_noop("Buchholz cut 1"), _swiss(TieBreak.BUCHHOLZ_CUT1)
        ),
        TieBreakMetric(
            TieBreak.SONNEBORN_BERGER,
            gettext_noop("Sonneborn-Berger"),
            _swiss(TieBreak.SONNEBORN_BERGER),
        ),
        TieBreakMetric(
            TieBreak.PROGRESSIVE, gettext_noop("Progressive score"), _swiss(TieBreak.PROGRESSIVE)
        ),
    )
}
"""Every tie-break, in the order an organizer is offered them. Adding one: a member of
:class:`TieBreak` and its entry here."""


def _counted(
    matches: Iterable[PlayedMatch[LineId]], known: set[LineId]
) -> Iterable[PlayedMatch[LineId]]:
    """The matches that count for standings: byes (by outcome or without opponent) are skipped."""
    for match in matches:
        if match.outcome == Outcome.BYE or match.away is None:
            continue
        for line in (match.home, match.away):
            if line not in known:
                raise ValueError(f"match {match.home} v {match.away}: {line!r} is not in the group")
        if match.home == match.away:
            raise ValueError(f"line {match.home!r} cannot play itself")
        if match.winner is not None and match.winner not in (match.home, match.away):
            raise ValueError(
                f"match {match.home} v {match.away}: winner {match.winner!r} did not play it"
            )
        yield match


def _totals(
    line_ids: Sequence[LineId], matches: Iterable[PlayedMatch[LineId]]
) -> dict[LineId, _Totals[LineId]]:
    totals: dict[LineId, _Totals[LineId]] = {line: _Totals() for line in line_ids}
    if len(totals) != len(line_ids):
        raise ValueError("a line appears twice in the group")
    matches = list(matches)
    for match in matches:
        # a scored bye (Danish, Swiss, Mitchell, late entry) adds its VP but no opponent
        if match.away is None and match.outcome == Outcome.BYE and match.home in totals:
            row = totals[match.home]
            row.vp += match.home_vp
            row.mp += match.home_mp
            row.points_scored += match.home_points
            row.vp_by_round.append((match.round_number, match.home_vp))
    for match in _counted(matches, set(totals)):
        assert match.away is not None
        sides = (
            (
                match.home,
                match.away,
                match.home_points,
                match.away_points,
                match.home_vp,
                match.home_mp,
            ),
            (
                match.away,
                match.home,
                match.away_points,
                match.home_points,
                match.away_vp,
                match.away_mp,
            ),
        )
        for line, opponent, scored, conceded, vp, mp in sides:
            row = totals[line]
            row.played += 1
            row.vp += vp
            row.mp += mp
            row.points_scored += scored
            row.points_conceded += conceded
            row.meetings.append((opponent, vp))
            row.vp_by_round.append((match.round_number, vp))
            if match.winner is None:
                row.drawn += 1
                row.drawn_with.append(opponent)
            elif match.winner == line:
                row.won += 1
                row.beaten.append(opponent)
            else:
                row.lost += 1
    return totals


def _sorted_ids(ids: Iterable[LineId]) -> list[LineId]:
    """Ids in a stable, seed-independent order (natural order when comparable)."""
    ids = list(ids)
    try:
        return sorted(ids)  # type: ignore[type-var]
    except TypeError:
        return sorted(ids, key=repr)


def draw_lots(tied: Iterable[LineId], lots_seed: int) -> dict[LineId, int]:
    """Reproducible drawing of lots among ``tied``: line → draw position (1 first).

    The generator is seeded with the stored seed and the sorted tied ids, so the same seed and the
    same tied lines always give the same draw, whatever order the lines arrive in.
    """
    order = _sorted_ids(tied)
    rng = random.Random(f"{lots_seed}:" + ",".join(repr(line) for line in order))
    rng.shuffle(order)
    return {line: position for position, line in enumerate(order, start=1)}


def _split(group: list[LineId], key: Mapping[LineId, Any]) -> list[list[LineId]]:
    """Split a tied group by ``key`` (higher first) into still-tied subgroups, best first."""
    ordered = sorted(group, key=lambda line: key[line], reverse=True)
    result: list[list[LineId]] = []
    for line in ordered:
        if result and key[result[-1][0]] == key[line]:
            result[-1].append(line)
        else:
            result.append([line])
    return result


def rank_group(
    line_ids: Sequence[LineId],
    matches: Iterable[PlayedMatch[LineId]],
    tiebreaks: Sequence[TieBreak],
    *,
    lots_seed: int,
    ratings: Mapping[LineId, float] | None = None,
    penalties: Mapping[LineId, int] | None = None,
) -> list[StandingRow[LineId]]:
    """Rank a group's lines by VP, then by each tie-break in order within still-tied subsets.

    ``penalties``: VP to take off a line's total (the referee's penalties, kept apart from the
    match results so that they survive a corrected result).

    Lines with equal VP keep being separated criterion by criterion; after the last one, lines
    still tied share a rank (lines of equal rank are listed in id order).
    """
    tiebreaks = [TieBreak(tiebreak) for tiebreak in tiebreaks]
    if len(set(tiebreaks)) != len(tiebreaks):
        raise ValueError("a tie-break appears twice")
    totals = _totals(line_ids, matches)
    penalty = {line: (penalties or {}).get(line, 0) for line in line_ids}
    for line, taken in penalty.items():
        totals[line].vp -= taken
    context = TieBreakContext(totals, ratings or {}, lots_seed)
    values: dict[LineId, dict[TieBreak, Any]] = {line: {} for line in line_ids}
    # criteria that do not depend on who is tied, computed once for every line
    global_values: dict[TieBreak, dict[LineId, Any]] = {}
    for tiebreak in tiebreaks:
        metric = TIEBREAKS[tiebreak]
        if metric.among_tied:
            for line in line_ids:
                values[line][tiebreak] = None
        else:
            global_values[tiebreak] = metric.values(context, list(totals))
            for line, value in global_values[tiebreak].items():
                values[line][tiebreak] = value

    groups = _split(list(line_ids), {line: t.vp for line, t in totals.items()})
    for tiebreak in tiebreaks:
        metric = TIEBREAKS[tiebreak]
        next_groups: list[list[LineId]] = []
        for group in groups:
            if len(group) == 1:
                next_groups.append(group)
                continue
            found: Mapping[LineId, Any]
            if metric.among_tied:
                found = metric.values(context, group)
                for line, value in found.items():
                    values[line][tiebreak] = value
            else:
                found = global_values[tiebreak]
            key = {line: metric.sort_key(found[line]) for line in group}
            next_groups.extend(_split(group, key))
        groups = next_groups

    rows: list[StandingRow[LineId]] = []
    position = 1
    for group in groups:
        shared = len(group) > 1
        for line in _sorted_ids(group) if shared else group:
            t = totals[line]
            rows.append(
                StandingRow(
                    line_id=line,
                    rank=position,
                    played=t.played,
                    won=t.won,
                    drawn=t.drawn,
                    lost=t.lost,
                    vp=t.vp,
                    mp=t.mp,
                    points_scored=t.points_scored,
                    points_conceded=t.points_conceded,
                    tiebreak_values={tb: values[line][tb] for tb in tiebreaks},
                    shared_rank=shared,
                    penalty=penalty[line],
                )
            )
        position += len(group)
    return rows


def head_to_head_grid(
    line_ids: Sequence[LineId], matches: Iterable[PlayedMatch[LineId]]
) -> dict[tuple[LineId, LineId], int]:
    """``(a, b)`` → VP ``a`` earned against ``b`` (summed over meetings), for pairs that met."""
    grid: dict[tuple[LineId, LineId], int] = {}
    for match in _counted(matches, set(line_ids)):
        assert match.away is not None
        grid[match.home, match.away] = grid.get((match.home, match.away), 0) + match.home_vp
        grid[match.away, match.home] = grid.get((match.away, match.home), 0) + match.away_vp
    return grid
