"""Group standings from stored MatchResults, with a fixed number of queries.

Three queries per call whatever the group (or stage) size: the members with their lines (and
the VP their penalties took off), the played matches, and their MatchResults; the ranking itself
is ``algorithms.standings.rank_group``.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from django.db.models import OuterRef, Subquery, Sum
from django.db.models.functions import Coalesce

from tournaments.algorithms import standings as algo
from tournaments.algorithms.vp import MatchScore
from tournaments.algorithms.vp import Outcome as AlgoOutcome
from tournaments.models import (
    Group,
    GroupMember,
    Line,
    Match,
    MatchResult,
    Outcome,
    Penalty,
    Stage,
    TieBreak,
    Tournament,
)
from tournaments.strengths import line_strengths

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class StandingRow(algo.StandingRow[int]):
    """The algorithm's row for one line, with the line itself and its start number in the group.

    Every total and tie-break value is the algorithm's own field (one definition of what a
    standing holds); this row only adds what a page or an export needs to name the line.
    """

    line: Line = field(kw_only=True)
    position: int | None = field(default=None, kw_only=True)
    # a duplicate stage's score against the field (standings_columns; empty elsewhere)
    direction: str = field(default="", kw_only=True)
    field_score: Fraction | None = field(default=None, kw_only=True)
    field_percentage: Fraction | None = field(default=None, kw_only=True)

    @classmethod
    def of(cls, ranked: algo.StandingRow[int], line: Line, position: int | None) -> StandingRow:
        values = {f.name: getattr(ranked, f.name) for f in fields(algo.StandingRow)}
        return cls(**values, line=line, position=position)

    @property
    def tiebreaks(self) -> list[tuple[str, Any]]:
        """``(tie-break, value)`` in the order the stage ranks by."""
        return [(str(tb), value) for tb, value in self.tiebreak_values.items()]


@dataclass
class GroupTable:
    """Standings and head-to-head grid of one group."""

    group: Group
    rows: list[StandingRow]
    grid: dict[tuple[int, int], int]
    tiebreaks: list[str]

    def grid_rows(self) -> list[tuple[StandingRow, list[int | None]]]:
        """For templates: per row, the VP earned against each line in standings order."""
        order = [row.line.pk for row in self.rows]
        return [
            (row, [None if a == b else self.grid.get((a, b)) for b in order])
            for row, a in zip(self.rows, order, strict=True)
        ]

    def tiebreak_labels(self) -> list[StrOrPromise]:
        labels = dict(TieBreak.choices)
        return [labels.get(tb, tb) for tb in self.tiebreaks]


def played_matches(
    matches: Iterable[Mapping[str, Any]], results: Iterable[Mapping[str, Any]]
) -> list[algo.PlayedMatch[int]]:
    """PlayedMatch objects for the algorithm, from values() rows."""
    by_match: dict[int, dict[int, Mapping[str, Any]]] = defaultdict(dict)
    for result in results:
        by_match[result["match_id"]][result["line_id"]] = result
    played: list[algo.PlayedMatch[int]] = []
    for match in matches:
        lines = by_match.get(match["id"])
        if not lines:
            continue
        if match["outcome"] == Outcome.BYE or match["away_id"] is None:
            # a scored bye (Danish, Swiss, Mitchell, a late entry's missed round)
            home = lines.get(match["home_id"])
            if home is not None:
                played.append(
                    algo.PlayedMatch(
                        home=match["home_id"],
                        away=None,
                        home_points=home["points"],
                        away_points=0,
                        home_vp=home["vp"],
                        away_vp=0,
                        home_mp=home["mp"],
                        away_mp=0,
                        winner=match["winner_id"],
                        outcome=AlgoOutcome.BYE,
                        round_number=match.get("round__number", 0),
                    )
                )
            continue
        home = lines.get(match["home_id"])
        away = lines.get(match["away_id"])
        if home is None or away is None:
            logger.warning("match %s has an incomplete result; left out", match["id"])
            continue
        # the stored VP and MP are the table's score written per line: the winner's row first
        won, lost = (away, home) if match["winner_id"] == match["away_id"] else (home, away)
        played.append(
            algo.PlayedMatch.from_score(
                match["home_id"],
                match["away_id"],
                (home["points"], away["points"]),
                MatchScore(won["vp"], lost["vp"], won["mp"], lost["mp"]),
                winner=match["winner_id"],
                outcome=AlgoOutcome(match["outcome"] or "completed"),
                round_number=match.get("round__number", 0),
            )
        )
    return played


def _tables_for(
    groups: list[Group],
    tournament: Tournament,
    ratings: Mapping[int, float] | None = None,
    stage_tiebreaks: list[str] | None = None,
    leave_out: Iterable[int] = (),
) -> list[GroupTable]:
    group_ids = [group.pk for group in groups]
    members: defaultdict[int, list[GroupMember]] = defaultdict(list)
    penalties: defaultdict[int, dict[int, int]] = defaultdict(dict)
    # the VP each member lost to penalties in the group's matches, read with the members
    taken = (
        Penalty.objects.filter(
            line_id=OuterRef("line_id"), match__group_id=OuterRef("group_id"), vp__gt=0
        )
        .values("line_id")
        .annotate(total=Sum("vp"))
        .values("total")
    )
    for member in (
        GroupMember.objects.filter(group_id__in=group_ids)
        .select_related("line")
        .annotate(penalty_vp=Coalesce(Subquery(taken), 0))
        .order_by("position")
    ):
        members[member.group_id].append(member)
        if member.penalty_vp:
            penalties[member.group_id][member.line_id] = member.penalty_vp
    matches: defaultdict[int, list[Mapping[str, Any]]] = defaultdict(list)
    done = Match.objects.filter(group_id__in=group_ids, status=Match.Status.DONE)
    leave_out = list(leave_out)
    if leave_out:  # tables whose result the reader may not see yet (access.withheld_results)
        done = done.exclude(pk__in=leave_out)
    for match in done.values(
        "id", "group_id", "home_id", "away_id", "winner_id", "outcome", "round__number"
    ):
        matches[match["group_id"]].append(match)
    results = defaultdict(list)
    for result in MatchResult.objects.filter(match__group_id__in=group_ids).values(
        "match_id", "match__group_id", "line_id", "points", "vp", "mp"
    ):
        results[result["match__group_id"]].append(result)

    tiebreaks = [algo.TieBreak(tb) for tb in stage_tiebreaks or tournament.tiebreaks or []]
    if ratings is None and algo.TieBreak.RATING in tiebreaks:
        line_ids = [m.line_id for ms in members.values() for m in ms]
        ratings = line_strengths(line_ids, tournament.seats_per_line)
    tables = []
    for group in groups:
        group_members = members[group.pk]
        line_ids = [m.line_id for m in group_members]
        lines = {m.line_id: m.line for m in group_members}
        positions = {m.line_id: m.position for m in group_members}
        played = played_matches(matches[group.pk], results[group.pk])
        ranked = algo.rank_group(
            line_ids,
            played,
            tiebreaks,
            lots_seed=tournament.lots_seed,
            ratings=ratings,
            penalties=penalties[group.pk],
        )
        rows = [StandingRow.of(row, lines[row.line_id], positions[row.line_id]) for row in ranked]
        if group.stage.kind == Stage.Kind.DUPLICATE:
            rows = _against_the_field(group.stage, rows)
        grid = algo.head_to_head_grid(line_ids, played)
        tables.append(GroupTable(group, rows, grid, [str(tb) for tb in tiebreaks]))
    return tables


def _against_the_field(stage: Stage, rows: list[StandingRow]) -> list[StandingRow]:
    """A duplicate stage's rows in the order of its ranking against the field (one per
    direction in a Mitchell): the matches' totals stay, the rank is the field's, and with the
    difference method the VP are those of the differences (net of penalties, as ranked)."""
    from tournaments.models import BoardSet
    from tournaments.services import duplicate

    board_set = BoardSet.objects.filter(stage=stage).select_related("stage__tournament").first()
    if board_set is None:
        return rows
    by_line = {row.line.pk: row for row in rows}
    ranked = []
    penalties = {row.line.pk: row.penalty for row in rows if row.penalty}
    for place in duplicate.field_ranking(board_set, penalties=penalties):
        row = by_line.get(place.line)
        if row is None:
            continue
        changes: dict[str, Any] = {
            "rank": place.rank,
            "shared_rank": place.shared_rank,
            "direction": place.direction.value if place.direction is not None else "",
            "field_score": place.score,
            "field_percentage": place.percentage,
        }
        if place.vp is not None:
            changes["vp"] = place.vp
        ranked.append(replace(row, **changes))
    return ranked


def _tournament_of(group: Group) -> Tournament:
    """The group's tournament, reusing cached relations (no query when already loaded)."""
    return group.stage.tournament


def group_table(
    group: Group, *, ratings: Mapping[int, float] | None = None, leave_out: Iterable[int] = ()
) -> GroupTable:
    """Standings and head-to-head grid of a group (pass it with ``stage__tournament`` loaded to
    save a query); the matches in ``leave_out`` count as not played yet (the tables a reader
    may not see, ``access.withheld_results``)."""
    stage_tiebreaks = group.stage.stage_tiebreaks or None
    return _tables_for([group], _tournament_of(group), ratings, stage_tiebreaks, leave_out)[0]


def group_standings(
    group: Group, *, ratings: Mapping[int, float] | None = None, leave_out: Iterable[int] = ()
) -> list[StandingRow]:
    """The ranked rows of a group: VP, then the tournament's tie-breaks."""
    return group_table(group, ratings=ratings, leave_out=leave_out).rows


def stage_tables(
    stage: Stage, *, ratings: Mapping[int, float] | None = None, leave_out: Iterable[int] = ()
) -> list[GroupTable]:
    """Tables of every group of a stage, in four queries in all (``leave_out``: as in
    ``group_table``)."""
    groups = list(Group.objects.filter(stage=stage).order_by("order", "name"))
    for group in groups:
        group.stage = stage
    return _tables_for(groups, stage.tournament, ratings, stage.stage_tiebreaks or None, leave_out)


def stage_standings(
    stage: Stage, *, ratings: Mapping[int, float] | None = None, leave_out: Iterable[int] = ()
) -> list[tuple[Group, list[StandingRow]]]:
    """``[(group, rows)]`` for every group of a stage, in group order."""
    tables = stage_tables(stage, ratings=ratings, leave_out=leave_out)
    return [(table.group, table.rows) for table in tables]
