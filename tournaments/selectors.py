"""Read-only queries behind the public pages and the desk, each a fixed number of queries.

Views call these and only render; nothing here writes. Results are plain objects or model
instances with a few attributes attached (``home_result``, ``away_result``).
"""

import logging
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from django.conf import settings
from django.db.models import Count, OuterRef, Prefetch, Q, Subquery
from django.http import Http404
from django.utils.translation import gettext as _

from tournaments import standings_columns
from tournaments.access import (
    Action,
    managed_tournaments,
    visible_lines,
    visible_players,
    visible_tournaments,
    withheld_results,
)
from tournaments.algorithms import swiss
from tournaments.exceptions import PairingError
from tournaments.models import (
    ChangeLog,
    Entry,
    Group,
    Invitation,
    Line,
    LineMember,
    Match,
    MatchResult,
    Outcome,
    ResultVersion,
    Round,
    Stage,
    TieBreak,
    Variant,
    engine_lang,
)
from tournaments.services.results import deals_of_match

logger = logging.getLogger(__name__)


# --- tournaments ------------------------------------------------------------------------------


POLL_SECONDS = 15  # settings.PAGES_POLL_SECONDS overrides it


def poll_seconds():
    """Seconds between two polls of a live page's fragment (the fallback when no push)."""
    return getattr(settings, "PAGES_POLL_SECONDS", POLL_SECONDS)


def _stamped(queryset):
    """Annotate what the page cache keys on: the newest change and match update."""
    return queryset.annotate(
        last_change_id=Subquery(
            ChangeLog.objects.filter(tournament=OuterRef("pk")).order_by("-id").values("id")[:1]
        ),
        last_match_update=Subquery(
            Match.objects.filter(round__stage__tournament=OuterRef("pk"))
            .order_by("-updated_at")
            .values("updated_at")[:1]
        ),
    )


def public_tournament(slug, user=None):
    """The tournament ``slug`` with its cache stamp if ``user`` may see it (anyone may see a
    public one; a private one only its role holders), or 404 so its name does not leak."""
    tournament = _stamped(visible_tournaments(user).filter(slug=slug)).first()
    if tournament is None:
        raise Http404("No such public tournament")
    return tournament


def public_tournaments(user=None):
    """The tournaments ``user`` may see, newest first."""
    return list(
        visible_tournaments(user)
        .annotate(n_lines=Count("entries", filter=Q(entries__withdrawn=False)))
        .order_by("-start_date", "name")
    )


def stages_with_groups(tournament):
    return list(
        tournament.stages.order_by("order").prefetch_related(
            Prefetch("groups", queryset=Group.objects.order_by("order", "name")),
            Prefetch("rounds", queryset=Round.objects.order_by("number")),
        )
    )


# --- matches ----------------------------------------------------------------------------------


def _matches(queryset):
    """Matches with lines, round and results loaded, ready to show (two queries). The results
    are read in one plain query, not by ``prefetch_related``, which clones its queryset for
    every match: two thirds of a 500-table round page's rebuild after one result."""
    rows = list(queryset.select_related("home", "away", "winner", "offender", "round", "group"))
    by_match: dict[int, dict[int, MatchResult]] = {match.pk: {} for match in rows}
    if rows:
        for result in MatchResult.objects.filter(match_id__in=list(by_match)).order_by("id"):
            by_match[result.match_id][result.line_id] = result
    for match in rows:
        by_line = by_match[match.pk]
        match.home_result = by_line.get(match.home_id)
        match.away_result = by_line.get(match.away_id)
    return rows


def withhold(matches, tournament, user=None):
    """Show the tables ``user`` may not read yet (``access.withheld_results``: a running
    duplicate stage's tables that hold a board still secret) as not played: no result, winner,
    outcome or tie-break, ``withheld`` set. ``user`` None: the public pages, one copy for every
    visitor. The rows are changed in memory for showing, never saved."""
    hidden = withheld_results(user, tournament) if matches else frozenset()
    for match in matches:
        match.withheld = match.pk in hidden
        if match.withheld:
            match.home_result = match.away_result = None
            match.status = Match.Status.SCHEDULED
            match.outcome = None
            match.winner = match.offender = None
            match.has_tiebreak = False
    return matches


def tournament_matches(tournament):
    return Match.objects.filter(round__stage__tournament=tournament)


def current_round(tournament):
    """The first round (in stage and round order) that still has a match without a result."""
    return (
        Round.objects.filter(stage__tournament=tournament)
        .filter(matches__status__in=[Match.Status.SCHEDULED, Match.Status.IN_PROGRESS])
        .select_related("stage")
        .order_by("stage__order", "number")
        .first()
    )


def round_matches(round_, *, public=False):
    """The round's matches; ``public``: as the public pages show them (``withhold``)."""
    rows = _matches(round_.matches.order_by("is_third_place", "table_number", "id"))
    return withhold(rows, round_.stage.tournament) if public else rows


def matches_shown(match_ids):
    """These matches as a public page's rows show them (the live push renders the changed
    ones), the tables still secret as not played (``withhold``)."""
    rows = _matches(
        Match.objects.filter(pk__in=list(match_ids)).select_related("round__stage__tournament")
    )
    by_tournament: dict[int, list] = {}
    for match in rows:
        by_tournament.setdefault(match.round.stage.tournament_id, []).append(match)
    for matches in by_tournament.values():
        withhold(matches, matches[0].round.stage.tournament)
    return rows


def next_matches(round_):
    if round_ is None:
        return []
    return _matches(round_.matches.exclude(status=Match.Status.DONE).order_by("table_number", "id"))


def latest_results(tournament, limit=8):
    """The newest results, as the public home page shows them: a table still secret is left
    out (``access.withheld_results``)."""
    hidden = withheld_results(None, tournament)
    return _matches(
        tournament_matches(tournament)
        .filter(status=Match.Status.DONE)
        .exclude(away__isnull=True)
        .exclude(pk__in=hidden)
        .order_by("-updated_at", "-id")[:limit]
    )


def get_round(tournament, round_id):
    round_ = (
        Round.objects.filter(pk=round_id, stage__tournament=tournament)
        .select_related("stage")
        .first()
    )
    if round_ is None:
        raise Http404("No such round")
    return round_


def get_stage(tournament, stage_id):
    stage = tournament.stages.filter(pk=stage_id).first()
    if stage is None:
        raise Http404("No such stage")
    return stage


def get_group(tournament, group_id):
    group = (
        Group.objects.filter(pk=group_id, stage__tournament=tournament)
        .select_related("stage")
        .first()
    )
    if group is None:
        raise Http404("No such group")
    return group


def get_match(tournament, match_id, *, public=False):
    """One match of ``tournament`` (404 otherwise); ``public``: as the public pages show it
    (``withhold``)."""
    found = _matches(
        Match.objects.filter(pk=match_id, round__stage__tournament=tournament).select_related(
            "round__stage"
        )
    )
    if not found:
        raise Http404("No such match")
    return withhold(found, tournament)[0] if public else found[0]


# --- standings --------------------------------------------------------------------------------


@dataclass
class StandingsTable:
    """A group's standings as the template shows them."""

    group: Any
    rows: list = field(default_factory=list)
    tiebreak_columns: list = field(default_factory=list)  # (value, label)
    grid_lines: list = field(default_factory=list)  # lines in rank order
    grid: list = field(default_factory=list)  # rows of cells (VP or None)


def _table_from(group_table, tournament):
    """``services.standings.GroupTable`` → what the templates show."""
    used = [TieBreak(t) for t in group_table.tiebreaks if t in TieBreak.values]
    columns = [(t.value, t.label) for t in used if t != TieBreak.MP]
    shown = []
    for row in group_table.rows:
        values = row.tiebreak_values
        shown.append(
            {
                "rank": row.rank,
                "shared_rank": row.shared_rank,
                "line": row.line,
                "line_id": row.line.pk,
                **standings_columns.totals_of(row),
                "tiebreaks": [values.get(value) for value, _label in columns],
            }
        )
    order = [r["line_id"] for r in shown]
    grid = group_table.grid
    grid_rows = [
        {
            "line": r["line"],
            "cells": [None if a == b else {"vp": grid.get((a, b))} for b in order],
        }
        for a, r in zip(order, shown, strict=True)
        # an open of hundreds of lines has no use for a line-by-line grid
        if not group_table.group.stage.is_paired_by_round
    ]
    return StandingsTable(
        group=group_table.group,
        rows=shown,
        tiebreak_columns=columns,
        grid_lines=[r["line"] for r in shown] if grid_rows else [],
        grid=grid_rows,
    )


def group_standings_table(group, tournament):
    """One group's rows, the tie-break columns the tournament uses and the VP grid."""
    from tournaments.services import standings

    group.stage.tournament = tournament  # spare the service a query
    # the public page's: a table still secret counts as not played yet
    hidden = withheld_results(None, tournament)
    return _table_from(standings.group_table(group, leave_out=hidden), tournament)


def stage_standings_tables(stage, tournament):
    """Every group of a round-robin stage, in a fixed number of queries."""
    from tournaments.services import standings

    stage.tournament = tournament
    hidden = withheld_results(None, tournament)  # the public page's, as for a group
    tables = standings.stage_tables(stage, leave_out=hidden)
    return [_table_from(table, tournament) for table in tables]


def field_tables(stage, tables):
    """A duplicate stage's ranking against the field as the pages show it: ``[(label, rows)]``,
    one per direction in a Mitchell (North-South first), one overall in a Howell; the rows are
    the standings' own (``standings_columns``: direction, score, percentage)."""
    if stage.kind != Stage.Kind.DUPLICATE or not tables:
        return []
    labels = {"ns": _("North-South"), "ew": _("East-West"), "": _("Overall")}
    result: list[tuple[Any, list]] = []
    for row in tables[0].rows:
        label = labels.get(row["direction"], row["direction"])
        if not result or result[-1][0] != label:
            result.append((label, []))
        result[-1][1].append(row)
    return result


def direction_tables(stage, tables):
    """A Mitchell stage's standings per direction: North-South and East-West, by VP."""
    from tournaments.algorithms.mitchell import Direction
    from tournaments.services.pairing import line_directions

    if stage.kind != Stage.Kind.MITCHELL or not tables:
        return []
    directions = line_directions(stage)
    result = []
    for direction, label in (
        (Direction.NORTH_SOUTH, _("North-South")),
        (Direction.EAST_WEST, _("East-West")),
    ):
        rows = [row for row in tables[0].rows if directions.get(row["line_id"]) is direction]
        result.append((label, [{**row, "rank": place} for place, row in enumerate(rows, 1)]))
    return result


# --- bracket ----------------------------------------------------------------------------------


def knockout_matches(stage):
    """Every match of a knock-out stage, by round then bracket position."""
    return _matches(
        Match.objects.filter(round__stage=stage).order_by(
            "round__number", "is_third_place", "bracket_position", "id"
        )
    )


# --- match page -------------------------------------------------------------------------------


class DealSide(NamedTuple):
    """One line's part of a deal, as the match page shows it."""

    points: int
    breakdown: dict[str, int]


def match_deals(match) -> list[dict[str, Any]]:
    """The deals of the result in force: ``[{"number", "home", "away", "is_tiebreak",
    "is_penalty"}]`` with a :class:`DealSide` per line; one query."""
    return [
        {
            "number": deal.number,
            "home": DealSide(deal.points[0], deal.breakdown[0]),
            "away": DealSide(deal.points[1], deal.breakdown[1]),
            "is_tiebreak": deal.is_tiebreak,
            "is_penalty": deal.is_penalty,
        }
        for deal in deals_of_match(match)
    ]


def scoring_categories(tournament):
    """The breakdown keys of a deal of ``tournament`` (variant and options), from the engine."""
    from scopa.variants import get_variant

    return get_variant(tournament.variant).category_keys(tournament.options or {})


def category_label(category):
    """A breakdown key's label in the active language, from the engine's registry."""
    from scopa.variants import category_label as label

    return label(category, engine_lang())


def breakdown_categories(deals, variant=Variant.SCOPA, options=None):
    """The categories to show as columns: the variant's own, then any other present."""
    from scopa.variants import get_variant

    shown = get_variant(variant).category_keys(options or {})
    extra = []
    for row in deals:
        for side in ("home", "away"):
            deal = row[side]
            for key in (deal.breakdown or {}) if deal else ():
                if key not in shown and key not in extra:
                    extra.append(key)
    return list(shown) + extra


# --- players and lines ------------------------------------------------------------------------


def get_player(player_id, user=None):
    """The player if ``user`` sees one of their tournaments; 404 otherwise (names do not leak)."""
    player = visible_players(user).filter(pk=player_id).first()
    if player is None:
        raise Http404("No such player")
    return player


def get_line(line_id, user=None):
    """The line if ``user`` sees one of its tournaments; 404 otherwise."""
    line = (
        visible_lines(user)
        .filter(pk=line_id)
        .prefetch_related(Prefetch("members", queryset=LineMember.objects.select_related("player")))
        .first()
    )
    if line is None:
        raise Http404("No such line")
    return line


def public_results_for_lines(line_ids, user=None):
    """MatchResults of these lines in tournaments ``user`` may see, newest first, with the
    opponent."""
    results = list(
        MatchResult.objects.filter(
            line_id__in=line_ids,
            match__round__stage__tournament__in=visible_tournaments(user).values("pk"),
        )
        .select_related(
            "line",
            "match__home",
            "match__away",
            "match__round__stage__tournament",
        )
        .order_by(
            "-match__round__stage__tournament__start_date",
            "-match__round__stage__tournament_id",
            "-match__round__stage__order",
            "-match__round__number",
            "-id",
        )
    )
    # a running duplicate stage's tables still secret are not shown (access.withheld_results)
    running = {
        r.match.round.stage.tournament_id: r.match.round.stage.tournament
        for r in results
        if r.match.round.stage.kind == Stage.Kind.DUPLICATE
        and r.match.round.stage.status != Stage.Status.CLOSED
    }
    hidden = {pk for t in running.values() for pk in withheld_results(user, t)}
    results = [r for r in results if r.match_id not in hidden]
    for result in results:
        match = result.match
        # shown beside the result on the player page
        result.opponent = match.away if result.line_id == match.home_id else match.home  # type: ignore[attr-defined]
        result.tournament = match.round.stage.tournament  # type: ignore[attr-defined]
    return results


def totals_by_tournament(results):
    """Per tournament (newest first): matches, won/drawn/lost, VP and MP totals."""
    totals: dict[int, dict[str, Any]] = {}
    for result in results:
        t = totals.setdefault(
            result.tournament.pk,
            {
                "tournament": result.tournament,
                "played": 0,
                "won": 0,
                "drawn": 0,
                "lost": 0,
                "vp": 0,
                "mp": 0,
            },
        )
        if result.opponent is None:  # a bye is not a match played
            continue
        t["played"] += 1
        t["won"] += result.won
        t["drawn"] += result.drawn
        t["lost"] += not (result.won or result.drawn)
        t["vp"] += result.vp
        t["mp"] += result.mp
    return list(totals.values())


def player_lines(player, user=None):
    """The player's lines that ``user`` may see (entered in a tournament they see)."""
    return list(visible_lines(user).filter(members__player=player).order_by("name").distinct())


# --- desk -------------------------------------------------------------------------------------


def organized_tournaments(user):
    """The tournaments whose desk ``user`` may open."""
    return list(managed_tournaments(user, Action.VIEW_DESK).order_by("-start_date", "name"))


def desk_stages(tournament):
    return list(
        tournament.stages.order_by("order").annotate(
            n_matches=Count("rounds__matches", distinct=True),
            n_done=Count(
                "rounds__matches",
                filter=Q(rounds__matches__status=Match.Status.DONE),
                distinct=True,
            ),
            n_rounds=Count("rounds", distinct=True),
            # results entered (a bye is part of the draw): a stage without any may be drawn again
            n_played=Count(
                "rounds__matches",
                filter=Q(rounds__matches__status=Match.Status.DONE)
                & ~Q(rounds__matches__outcome=Outcome.BYE),
                distinct=True,
            ),
        )
    )


def missing_results(tournament, limit=200):
    """Matches with both lines known and no result yet, in play order."""
    return _matches(
        tournament_matches(tournament)
        .exclude(status=Match.Status.DONE)
        .filter(home__isnull=False, away__isnull=False)
        .order_by("round__stage__order", "round__number", "table_number", "id")[:limit]
    )


def recent_changes(tournament, limit=30):
    return list(
        ChangeLog.objects.filter(tournament=tournament)
        .select_related("user", "match__home", "match__away")
        .order_by("-created_at", "-id")[:limit]
    )


def desk_match(tournament, match_id):
    match = (
        Match.objects.filter(pk=match_id, round__stage__tournament=tournament)
        .select_related("home", "away", "round__stage", "winner", "offender", "group")
        .first()
    )
    if match is None:
        raise Http404("No such match")
    return match


def stage_rounds(stage):
    return list(Round.objects.filter(stage=stage).order_by("number"))


def all_stage_objects(tournament):
    return Stage.objects.filter(tournament=tournament).order_by("order")


def rounds_of(tournament):
    return list(
        Round.objects.filter(stage__tournament=tournament).order_by("stage__order", "number")
    )


def match_versions(match):
    """Every version of a match's result, newest first, with who made and decided it."""
    return list(
        ResultVersion.objects.filter(match=match)
        .select_related("author", "decided_by", "based_on", "submission")
        .order_by("-number")
    )


def pending_decisions(tournament, limit=200):
    """Versions waiting for the organizer's decision (oldest first: first come, first decided)."""
    return list(
        ResultVersion.objects.filter(
            match__round__stage__tournament=tournament, status=ResultVersion.Status.AWAITING
        )
        .select_related("match__home", "match__away", "match__round__stage", "author")
        .order_by("created_at", "id")[:limit]
    )


def stage_sequence(tournament):
    """The day's stages in order (the desk's sequence page says each one in words)."""
    return list(Stage.objects.filter(tournament=tournament).order_by("order"))


def swiss_cap_warning(stage) -> str:
    """Said before a Swiss stage is built: more lines than the Swiss pairing takes, and what to
    use instead ("" when the stage is fine)."""
    if stage.kind != Stage.Kind.SWISS or stage.status == Stage.Status.CLOSED:
        return ""
    lines = Entry.objects.filter(tournament_id=stage.tournament_id, withdrawn=False).count()
    if lines <= swiss.MAX_LINES:
        return ""
    return _(
        "%(n)d lines are entered, and a Swiss stage pairs at most %(max)d (the FIDE Dutch "
        "pairing would take minutes a round): make this stage Danish, which pairs any number."
    ) % {"n": lines, "max": swiss.MAX_LINES}


@dataclass
class QualifyingRanking:
    """The ranking a Danish/Swiss/Mitchell stage pairs and qualifies by (over its carry-over
    chain), with the words that say which ranking it is and the lines it sends on."""

    words: str
    combined: bool
    rows: list = field(default_factory=list)  # dicts: rank, line, vp, played, byes, goes_on
    going_on: int = 0
    next_stage: Any = None


def _bracket_size(knockout) -> int:
    """Lines drawn in a knock-out's first round (0 before it is drawn)."""
    first = Match.objects.filter(round__stage=knockout, round__number=1)
    return len({line for pair in first.values_list("home_id", "away_id") for line in pair if line})


def qualifying_ranking(stage, tournament) -> QualifyingRanking | None:
    """``pairing.open_standings`` (what ``close_stage`` seeds a knock-out from), as rows."""
    from tournaments.services import pairing
    from tournaments.services import stages as stage_service
    from tournaments.services.entries import withdrawn_line_ids

    if not stage.is_paired_by_round:
        return None
    stage.tournament = tournament
    day = stage_sequence(tournament)
    ranked = pairing.open_standings(stage)
    lines = Line.objects.in_bulk([row.line_id for row in ranked])
    following = [s for s in day if s.order > stage.order]
    nxt = min(following, key=lambda s: s.order) if following else None
    going_on = 0
    if nxt is not None and nxt.is_knockout:
        # the count set on the stage, or the one the organizer gave when closing it
        going_on = stage.advance_count or _bracket_size(nxt)
    withdrawn = withdrawn_line_ids(tournament)
    in_draw = [row.line_id for row in ranked if row.line_id not in withdrawn]
    try:
        going = set(pairing.going_on(stage, in_draw, going_on))
    except PairingError:
        # more places kept than lines going on: the desk says so when the stage is closed
        going = set(in_draw[:going_on])
    rows = [
        {
            "rank": row.rank,
            "line": lines[row.line_id],
            "vp": row.vp,
            "played": row.played,
            "byes": row.byes,
            "goes_on": row.line_id in going,
        }
        for row in ranked
    ]
    return QualifyingRanking(
        words=stage_service.ranking_sentence(stage, day),
        combined=len(stage_service.counted_stages(stage, day)) > 1,
        rows=rows,
        going_on=going_on,
        next_stage=nxt,
    )


def stage_words(stage, tournament) -> str:
    """What a stage's page shows, in words: which ranking, or where a bracket's lines came
    from."""
    from tournaments.services import stages as stage_service

    day = stage_sequence(tournament)
    if not stage.is_knockout:
        return stage_service.ranking_sentence(stage, day)
    earlier = [s for s in day if s.order < stage.order]
    if not earlier:
        return _("The bracket is drawn from the lines' seeds.")
    previous = max(earlier, key=lambda s: s.order)
    return stage_service.qualification_sentence(previous, day)


def open_invitations(tournament):
    """Invitations of ``tournament`` not used nor withdrawn (expired ones are said so)."""
    from django.utils import timezone

    now = timezone.now()
    rows = list(
        Invitation.objects.filter(tournament=tournament, used_at__isnull=True, revoked_at=None)
        .select_related("created_by")
        .order_by("-created_at")
    )
    for row in rows:
        row.expired = row.expires_at <= now  # type: ignore[attr-defined]
    return rows


@dataclass
class MovementCard:
    """One line's way through a Mitchell movement: ``rows`` of (round, table, direction,
    opponent name or ``None`` for a bye)."""

    line: Any
    start: str
    rows: list = field(default_factory=list)


def _duplicate_movement_cards(stage) -> list[MovementCard]:
    """Per line of a duplicate stage: its table, direction, opponent and boards in every round
    of the movement drawn (``duplicate_movement.line_card``), and at a relay table the table
    that plays the same boards; rows of (round, table, direction, opponent, boards, relay
    table)."""
    from tournaments.algorithms import duplicate_movement, mitchell
    from tournaments.models import BoardSet
    from tournaments.services import duplicate

    board_set = BoardSet.objects.filter(stage=stage).first()
    if board_set is None:
        return []
    order = [int(line_id) for line_id in board_set.start_order]
    names = Line.objects.in_bulk(order)
    movement = duplicate.movement_of(board_set)
    relay_of = {(t.round, t.table): t.relay_with for tables in movement for t in tables}
    label = {
        mitchell.Direction.NORTH_SOUTH: _("North-South"),
        mitchell.Direction.EAST_WEST: _("East-West"),
    }
    cards = []
    for line in order:
        rows = duplicate_movement.line_card(movement, line)
        first = next((row for row in rows if row.table is not None), None)
        start = (
            _("table %(table)d, %(direction)s")
            % {"table": first.table, "direction": label[first.direction]}
            if first is not None and first.direction is not None
            else ""
        )
        card = MovementCard(names[line], start)
        for row in rows:
            opponent = names[row.opponent].name if row.opponent is not None else None
            card.rows.append(
                (
                    row.round,
                    row.table or "–",
                    label[row.direction] if row.direction is not None else "",
                    opponent,
                    ", ".join(str(b) for b in row.boards),
                    relay_of.get((row.round, row.table or 0)),
                )
            )
        cards.append(card)
    return cards


def movement_cards(stage) -> list[MovementCard]:
    """Per line of a Mitchell stage (once round 1 set its start order): its table and
    direction in every round of the movement (``algorithms.mitchell``, as the pairing seats
    them), and whom it meets there; of a duplicate stage also the boards of each round
    (``_duplicate_movement_cards``)."""
    from tournaments.algorithms import mitchell
    from tournaments.services.pairing import open_group

    if stage.kind == Stage.Kind.DUPLICATE:
        return _duplicate_movement_cards(stage)
    if stage.kind != Stage.Kind.MITCHELL:
        return []
    group = open_group(stage)
    if group is None:
        return []
    members = list(group.members.select_related("line").order_by("position"))
    order = [m.line_id for m in members]
    if len(order) < 2:
        return []
    names = {m.line_id: m.line for m in members}
    rounds = stage.rounds_planned or mitchell.table_count(len(order))
    rounds = min(rounds, mitchell.table_count(len(order)))
    schedule = mitchell.mitchell_schedule(order, rounds=rounds, arrow_switch=stage.arrow_switch)
    label = {
        mitchell.Direction.NORTH_SOUTH: _("North-South"),
        mitchell.Direction.EAST_WEST: _("East-West"),
    }
    starts = mitchell.directions(order)
    cards = {
        line: MovementCard(
            names[line],
            _("table %(table)d, %(direction)s")
            % {"table": starts[line].table, "direction": label[starts[line].direction]},
        )
        for line in order
    }
    for number, tables in enumerate(schedule, start=1):
        for table in tables:
            for line, other, direction in (
                (table.ns, table.ew, mitchell.Direction.NORTH_SOUTH),
                (table.ew, table.ns, mitchell.Direction.EAST_WEST),
            ):
                if line is None:
                    continue
                opponent = names[other].name if other is not None else None
                cards[line].rows.append((number, table.table, label[direction], opponent))
    return [cards[line] for line in order]


# --- podium, categories and prizes -------------------------------------------------------------


@dataclass(frozen=True)
class PodiumLine:
    rank: int
    name: str
    category: str
    withdrawn: bool
    prize: str = ""


@dataclass(frozen=True)
class AwardedPrize:
    label: str
    value: int
    place: int
    category: str
    winner: str  # the line's name; empty while no line is ranked for it


@dataclass
class Podium:
    """The final ranking (overall, or one category's with ranks renumbered) and the prize list
    in handing order, read from the federation export so the pages and the file agree."""

    ranking: list[PodiumLine]
    prizes: list[AwardedPrize]
    categories: list[tuple[str, str]]  # (value, label) of the categories played in
    category: str  # the one shown, "" for overall

    @property
    def categories_label(self) -> str:
        return dict(self.categories).get(self.category, "")

    @property
    def top(self) -> list[PodiumLine]:
        return [line for line in self.ranking if line.rank <= 3][:4]


def podium(tournament, category: str = "") -> Podium:
    from tournaments.algorithms.prizes import RankedLine, categories_of, category_ranking
    from tournaments.models import category_label
    from tournaments.services.export import build_document

    doc = build_document(tournament)
    lines = {line["ref"]: line for line in doc["lines"]}
    prize_of = {p["line"]: p["label"] for p in doc["prizes"] if p["line"]}
    refs = list(lines)
    index = {ref: i for i, ref in enumerate(refs)}
    ordered = sorted(doc["final_standings"], key=lambda place: place["rank"])
    ranked = [
        RankedLine(index[p["line"]], p["rank"], lines[p["line"]].get("category", ""))
        for p in ordered
        if p["line"] in lines
    ]
    categories = categories_of(ranked)
    if category and category in categories:
        ranked = category_ranking(ranked, category)
    else:
        category = ""

    def row(x: RankedLine) -> PodiumLine:
        line = lines[refs[x.line]]
        return PodiumLine(
            rank=x.rank,
            name=line["name"],
            category=category_label(x.category),
            withdrawn=line["withdrawn"],
            prize=prize_of.get(refs[x.line], ""),
        )

    return Podium(
        ranking=[row(x) for x in ranked],
        prizes=[
            AwardedPrize(
                label=p["label"],
                value=p["value"],
                place=p["place"],
                category=category_label(p["category"]),
                winner=lines[p["line"]]["name"] if p["line"] in lines else "",
            )
            for p in doc["prizes"]
        ],
        categories=[(c, category_label(c)) for c in categories],
        category=category,
    )


# --- penalties ---------------------------------------------------------------------------------


def match_penalties(match) -> list:
    """The penalties given in ``match``, oldest first, with their lines."""
    from tournaments.models import Penalty

    return list(Penalty.objects.filter(match=match).select_related("line").order_by("id"))


def tournament_penalties(tournament) -> list:
    """Every penalty given in ``tournament``, oldest first, with its line and match."""
    from tournaments.models import Penalty

    return list(
        Penalty.objects.filter(match__round__stage__tournament=tournament)
        .select_related("line", "match__round__stage")
        .order_by("id")
    )


# --- duplicate: boards and a line's scores against the field ---------------------------------


def _duplicate_of(stage):
    from tournaments.models import BoardSet

    if stage.kind != Stage.Kind.DUPLICATE:
        return None
    return BoardSet.objects.filter(stage=stage).first()


def stage_board_set(stage):
    """A duplicate stage's boards for its page: ``{"boards": [(number, is_open)]}``, or None
    (no boards drawn, or another kind of stage). A board not open links nowhere. ``counted``:
    how many boards the ranking counts (`duplicate.counted_boards`), of ``total``."""
    from tournaments.services import duplicate

    board_set = _duplicate_of(stage)
    if board_set is None:
        return None
    shown = duplicate.open_boards(board_set)
    numbers = [int(data["number"]) for data in board_set.boards]
    counted = len(duplicate.counted_boards(board_set))
    return {
        "board_set": board_set,
        "boards": [(n, n in shown) for n in numbers],
        "counted": counted,
        "total": len(numbers),
    }


def _scored(board_set):
    """The stage's results board by board and every line's score, keyed (board, line)."""
    from tournaments.services import duplicate

    results = duplicate.board_results(board_set)
    scores = {(s.board, s.line): s for s in duplicate.scores(board_set, results)}
    return results, scores


def _match_of_tables(stage):
    return {
        (m.round.number, m.table_number): m
        for m in Match.objects.filter(round__stage=stage, away__isnull=False).select_related(
            "round", "home", "away"
        )
    }


def secret_deal_numbers(match) -> set[int]:
    """The deals of a duplicate table whose board some other table has still to play (deal i
    is the table's i-th board): their points and categories, and the replay's cards, would
    tell that table how the board goes, so pages and the API show them only once the board is
    open. Empty outside a duplicate stage."""
    from tournaments.services import duplicate

    if match.round.stage.kind != Stage.Kind.DUPLICATE:
        return set()
    board_set = _duplicate_of(match.round.stage)
    if board_set is None:
        return set()
    shown = duplicate.open_boards(board_set)
    numbers = duplicate.board_numbers_of_match(match)
    return {index for index, board in enumerate(numbers) if board not in shown}


def board_traveller(stage, number):
    """A board's traveller: every table's result on it with each line's score against the
    field, or Http404 while the board is secret (some table holding it has no result) or does
    not exist. ``rows``: round, table, match, the two lines, their points (None when ruled),
    their scores, the ruling if any (the page adds whether the match has a replay)."""
    from tournaments.models import BoardAdjustment, BoardSet
    from tournaments.services import duplicate

    board_set = _duplicate_of(stage)
    if board_set is None or not duplicate.board_is_open(board_set, number):
        raise Http404("No such board, or still secret")
    results, scores = _scored(board_set)
    matches = _match_of_tables(stage)
    round_of = {
        (t.table, board): t.round
        for tables in duplicate.movement_of(board_set)
        for t in tables
        if t.plays
        for board in t.boards
    }
    rulings = {
        a.match_id: a
        for a in BoardAdjustment.objects.filter(match__round__stage=stage, board=number)
    }
    rows = []
    for result in results:
        if result.board != number:
            continue
        round_number = round_of.get((result.table, number))
        match = matches.get((round_number, result.table))
        ns, ew = scores.get((number, result.ns)), scores.get((number, result.ew))
        rows.append(
            {
                "round": round_number,
                "table": result.table,
                "match": match,
                "ns": match.home if match else None,
                "ew": match.away if match else None,
                "ns_points": result.ns_points,
                "ew_points": result.ew_points,
                "ns_score": ns.score if ns else None,
                "ew_score": ew.score if ew else None,
                "factored": bool(ns and ns.factored),
                "ruling": rulings.get(match.pk) if match else None,
            }
        )
    rows.sort(key=lambda r: (r["round"] or 0, r["table"]))
    top = next((s.top for (b, _line), s in scores.items() if b == number), 0)
    return {
        "board_set": board_set,
        "number": number,
        "rows": rows,
        "top": top,
        "matchpoints": board_set.scoring == BoardSet.Scoring.MATCHPOINTS,
        "factored": any(row["factored"] for row in rows),
    }


def line_boards(stage, line_id):
    """A line's card against the field in a duplicate stage: each board it played, round by
    round, with its points and its score; a board still secret shows neither (its score depends
    on tables that have not played it). Http404 outside a duplicate stage or for a line that
    does not play it."""
    from tournaments.algorithms.duplicate_movement import line_card
    from tournaments.algorithms.mitchell import Direction
    from tournaments.models import BoardSet
    from tournaments.services import duplicate

    board_set = _duplicate_of(stage)
    if board_set is None or line_id not in [int(i) for i in board_set.start_order]:
        raise Http404("No such line in this stage")
    line = Line.objects.get(pk=line_id)
    shown = duplicate.open_boards(board_set)
    results, scores = _scored(board_set)
    by_board = {(r.board, r.ns): r for r in results} | {(r.board, r.ew): r for r in results}
    card = line_card(duplicate.movement_of(board_set), line.pk)
    opponents = Line.objects.in_bulk([row.opponent for row in card if row.opponent])
    rows: list[dict[str, Any]] = []
    for row in card:
        for board in row.boards:
            result = by_board.get((board, line.pk))
            is_open = board in shown and result is not None
            north_south = row.direction is Direction.NORTH_SOUTH
            score = scores.get((board, line.pk)) if is_open else None
            mine, theirs = None, None
            if is_open and result is not None and result.adjusted is None:
                ns_ew = (result.ns_points, result.ew_points)
                mine, theirs = ns_ew if north_south else ns_ew[::-1]
            rows.append(
                {
                    "round": row.round,
                    "table": row.table,
                    "direction": row.direction,
                    "opponent": opponents.get(row.opponent) if row.opponent else None,
                    "board": board,
                    "open": is_open,
                    "points": mine,
                    "conceded": theirs,
                    "score": score.score if score else None,
                    "top": score.top if score else None,
                    "adjusted": bool(score and score.adjusted),
                }
            )
    total = [r for r in rows if r["score"] is not None]
    return {
        "board_set": board_set,
        "line": line,
        "rows": rows,
        "matchpoints": board_set.scoring == BoardSet.Scoring.MATCHPOINTS,
        "score": sum((r["score"] for r in total), 0),
        "top": sum(r["top"] or 0 for r in total),
    }
