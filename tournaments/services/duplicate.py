"""Duplicate stages: the board set stored with the stage, the whole movement drawn at once, the
boards each match plays, the results read board by board and scored against the field, and the
secrecy rules.

The engine draws the boards (`scopa.boards`), the algorithms score and move them
(`tournaments/algorithms/duplicate.py`, `duplicate_movement.py`); this module does the ORM work.
A board is deal i of the match that holds it: the results package stores a duplicate match like
any other (its deals in the version in force), so every way of entering a result (desk, phones,
verified records) is tied to its boards without a second writer. Records are held to their
boards when they are submitted (`games.services.check_record_fits` calls `record_board_errors`).

Secrecy: a board's cards are shown only once every table that holds it has a result in force
(`board_is_open`); the seed only once the stage is closed (`seed_is_open`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

import scopa
from scopa.boards import Board, board_errors, new_board_seed
from scopa.errors import PlayError
from tournaments.algorithms import duplicate, duplicate_movement, mitchell
from tournaments.algorithms.mitchell import Direction
from tournaments.exceptions import BoardRulingError, ScheduleError, TournamentError
from tournaments.models import (
    BoardAdjustment,
    BoardSet,
    EndRule,
    ForbiddenPairing,
    Group,
    GroupMember,
    Line,
    Match,
    Round,
    Stage,
)
from tournaments.services import changelog, lifecycle, schedule
from tournaments.services.results.stored import deals_in_force

logger = logging.getLogger(__name__)

MIN_LINES = 3
MAX_BOARDS_PER_ROUND = 36  # BoardSet.boards_per_round's bound


def _movement(
    board_set: BoardSet,
) -> list[list[duplicate_movement.BoardTable[int]]]:
    order = [int(line_id) for line_id in board_set.start_order]
    if board_set.movement == BoardSet.Movement.HOWELL:
        return duplicate_movement.howell_movement(
            order, board_set.boards_per_round, rounds=board_set.rounds
        )
    return duplicate_movement.mitchell_movement(
        order,
        board_set.boards_per_round,
        rounds=board_set.rounds,
        arrow_switch=board_set.arrow_switch,
        relay=board_set.relay,
    )


def full_rounds(movement: str, n_lines: int) -> int:
    """The rounds of a full movement for `n_lines` lines: a Mitchell one per table, a Howell
    one fewer than the lines (counting the empty seat of an odd field)."""
    if movement == BoardSet.Movement.HOWELL:
        return n_lines - 1 if n_lines % 2 == 0 else n_lines
    return (n_lines + 1) // 2


def uses_relay(movement: str, n_lines: int, asked: bool) -> bool:
    """Whether a movement of `n_lines` lines plays with the relay table: a Mitchell of an even
    number of tables when the organizer chose it over the skip, and always with two tables
    (the skip would bring the East-West lines back where they started); never otherwise (an
    odd number of tables needs neither, a Howell has every table play the round's set)."""
    if movement != BoardSet.Movement.MITCHELL:
        return False
    n_tables = (n_lines + 1) // 2
    return n_tables == 2 or (asked and n_tables % 2 == 0)


def movement_of(board_set: BoardSet) -> list[list[duplicate_movement.BoardTable[int]]]:
    """Every round of the stage's movement, worked out again from the start order."""
    return _movement(board_set)


def _forbidden_apart(
    tournament: Any,
    order: list[int],
    *,
    movement: str,
    boards_per_round: int,
    rounds: int | None,
    arrow_switch: bool,
    relay: bool = False,
) -> list[int]:
    """The start order with the tournament's forbidden pairings kept from meeting: a Mitchell
    seats each pair in one direction (`mitchell.seat_apart`, as a Mitchell stage does; lines of
    one direction never meet), a Howell cannot move anyone. Refused, naming the pairs, when the
    movement would still make one meet."""
    present = set(order)
    pairs = {
        frozenset(pair)
        for pair in ForbiddenPairing.objects.filter(tournament=tournament).values_list(
            "line_a_id", "line_b_id"
        )
    }
    pairs = {pair for pair in pairs if pair <= present}
    if not pairs:
        return order
    if movement == BoardSet.Movement.MITCHELL:
        order = mitchell.seat_apart(order, None, pairs).order
        tables = duplicate_movement.mitchell_movement(
            order, boards_per_round, rounds=rounds, arrow_switch=arrow_switch, relay=relay
        )
    else:
        tables = duplicate_movement.howell_movement(order, boards_per_round, rounds=rounds)
    meeting = {
        pair
        for round_tables in tables
        for t in round_tables
        if t.ns is not None and t.ew is not None and (pair := frozenset((t.ns, t.ew))) in pairs
    }
    if not meeting:
        return order
    names = dict(
        Line.objects.filter(pk__in=[i for p in meeting for i in p]).values_list("pk", "name")
    )
    said = "; ".join(sorted(" – ".join(sorted(names[i] for i in pair)) for pair in meeting))
    if movement == BoardSet.Movement.MITCHELL:
        raise ScheduleError(
            _(
                "The forbidden pairings cannot all sit in one direction of this Mitchell, and "
                "these lines would meet: %(pairs)s. Remove one from the list of forbidden "
                "pairings to draw the stage."
            )
            % {"pairs": said}
        )
    raise ScheduleError(
        _(
            "In a Howell every line meets the others, and these lines would meet: %(pairs)s. "
            "Choose a Mitchell (it seats them in one direction) or fewer rounds, or remove the "
            "pairing from the list of forbidden pairings."
        )
        % {"pairs": said}
    )


@transaction.atomic
def draw_duplicate(
    stage: Stage,
    *,
    movement: str = BoardSet.Movement.MITCHELL,
    scoring: str = BoardSet.Scoring.MATCHPOINTS,
    seed: str | None = None,
    arrow_switch: bool = False,
    relay: bool = False,
    rounds: int | None = None,
    user: Any = None,
    replace: bool = False,
) -> BoardSet:
    """Draw the board set from `seed` (a fresh secret one from the engine by default) and every
    round of the movement (its first `rounds`, or all), lines in seed order; a round plays as
    many boards as the tournament's matches have deals, so the tournament's matches must end by
    deals. `relay`: a Mitchell of an even number of tables shares a set between its first and
    last table and rests one on a bye-stand instead of the skip (`uses_relay`)."""
    if stage.kind != Stage.Kind.DUPLICATE:
        raise ScheduleError(_("Boards belong to a duplicate stage."))
    if movement not in BoardSet.Movement.values or scoring not in BoardSet.Scoring.values:
        raise ScheduleError(_("Choose a movement and a way of scoring from the list."))
    tournament = stage.tournament
    if tournament.end_rule != EndRule.DEALS:
        raise ScheduleError(
            _(
                "A duplicate stage plays a fixed number of boards a round: set the tournament's "
                "matches to end after a number of deals."
            )
        )
    if scoring == BoardSet.Scoring.DIFFERENCE and (
        tournament.vp_table is None or tournament.vp_table.kind != "margin"
    ):
        raise ScheduleError(
            _(
                "The difference from the average is turned into VP by a table of margins: "
                "choose one for the tournament, or score by matchpoints."
            )
        )
    lines = schedule.seeded_lines(tournament)
    if len(lines) < MIN_LINES:
        raise ScheduleError(_("A duplicate stage needs at least three lines."))
    relay = uses_relay(movement, len(lines), relay)
    most = full_rounds(movement, len(lines))
    if rounds is not None and not 1 <= rounds <= most:
        raise ScheduleError(
            _("This movement of %(lines)d lines plays 1 to %(n)d rounds.")
            % {"lines": len(lines), "n": most}
        )
    if rounds == most:
        rounds = None
    order = _forbidden_apart(
        tournament,
        [line.pk for line in lines],
        movement=movement,
        boards_per_round=max(1, tournament.end_value),
        rounds=rounds,
        arrow_switch=arrow_switch,
        relay=relay,
    )
    replaced = schedule._clear_stage(stage, replace=replace, what=_("rounds"))
    BoardSet.objects.filter(stage=stage).delete()
    stage.groups.all().delete()
    per_round = tournament.end_value
    if not 1 <= per_round <= MAX_BOARDS_PER_ROUND:
        raise ScheduleError(_("A round plays 1 to %(n)d boards.") % {"n": MAX_BOARDS_PER_ROUND})
    board_set = BoardSet(
        stage=stage,
        seed=seed if seed is not None else new_board_seed(),
        movement=movement,
        scoring=scoring,
        boards_per_round=per_round,
        start_order=order,
        arrow_switch=arrow_switch and movement == BoardSet.Movement.MITCHELL,
        relay=relay,
        rounds=rounds,
    )
    movement_rounds = _movement(board_set)
    n_boards = max(b for tables in movement_rounds for t in tables for b in t.boards)
    boards = scopa.board_set(
        board_set.seed,
        n_boards,
        variant=tournament.variant,
        seat_count=tournament.seats,
        options=tournament.options,
    )
    board_set.boards = [board.as_dict() for board in boards]
    board_set.full_clean(exclude=["stage"])
    board_set.save()
    group = Group.objects.create(stage=stage, name="A", order=0)
    GroupMember.objects.bulk_create(
        GroupMember(group=group, line_id=line_id, position=position)
        for position, line_id in enumerate(order, start=1)
    )
    round_rows = [
        Round.objects.create(stage=stage, number=r) for r in range(1, len(movement_rounds) + 1)
    ]
    matches = [
        Match(
            round=round_rows[t.round - 1],
            group=group,
            home_id=t.ns,
            away_id=t.ew,
            table_number=t.table,
        )
        for tables in movement_rounds
        for t in tables
        if t.plays
    ]
    Match.objects.bulk_create(matches, batch_size=500)
    if stage.status == Stage.Status.PENDING:
        stage.status = Stage.Status.RUNNING
        stage.save(update_fields=["status"])
    changelog.record(
        tournament,
        "rounds.generated",
        user=user,
        stage=stage.pk,
        rounds=len(movement_rounds),
        matches=len(matches),
        boards=n_boards,
        replaced=replaced,
    )
    logger.info("stage %s: %d boards, %d matches", stage.pk, n_boards, len(matches))
    lifecycle.sync_status(tournament)
    return board_set


def _match_end_for_boards(tournament: Any, boards_per_round: int, user: Any) -> None:
    """Make the tournament's matches end after `boards_per_round` deals (a duplicate round plays
    a match's deals as its boards), unless some match is already drawn under another rule."""
    if tournament.end_rule == EndRule.DEALS and tournament.end_value == boards_per_round:
        return
    if Match.objects.filter(round__stage__tournament=tournament).exists():
        if tournament.end_rule == EndRule.DEALS:
            raise ScheduleError(
                _(
                    "This tournament's matches are already drawn over %(n)d deals: a duplicate "
                    "stage plays a match's deals as its boards, so choose %(n)d boards a round."
                )
                % {"n": tournament.end_value}
            )
        raise ScheduleError(
            _(
                "This tournament's matches are already drawn to %(n)d points: a duplicate stage "
                "needs matches that end after a number of deals (its boards)."
            )
            % {"n": tournament.end_value}
        )
    tournament.end_rule = EndRule.DEALS
    tournament.end_value = boards_per_round
    tournament.save(update_fields=["end_rule", "end_value", "updated_at"])
    changelog.record(tournament, "tournament.match_end", user=user, deals=boards_per_round)


@transaction.atomic
def create_session(
    tournament: Any,
    *,
    name: str = "",
    movement: str = BoardSet.Movement.MITCHELL,
    scoring: str = BoardSet.Scoring.MATCHPOINTS,
    boards_per_round: int,
    rounds: int | None = None,
    arrow_switch: bool = False,
    relay: bool = False,
    position: int | None = None,
    user: Any = None,
) -> BoardSet:
    """The desk's duplicate session in one step: a duplicate stage added to the day, the
    tournament's matches set to end after the round's boards (refused once matches are drawn
    under another rule), and the board set drawn from a fresh secret seed with its movement.
    The variant and the seats are the tournament's. All or nothing."""
    from tournaments.services import stages

    if not 1 <= boards_per_round <= MAX_BOARDS_PER_ROUND:
        raise ScheduleError(_("A round plays 1 to %(n)d boards.") % {"n": MAX_BOARDS_PER_ROUND})
    _match_end_for_boards(tournament, boards_per_round, user)
    stage = stages.add_stage(
        tournament, user=user, position=position, name=name, kind=Stage.Kind.DUPLICATE
    )
    return draw_duplicate(
        stage,
        movement=movement,
        scoring=scoring,
        rounds=rounds,
        arrow_switch=arrow_switch,
        relay=relay,
        user=user,
    )


def boards_of(board_set: BoardSet) -> tuple[Board, ...]:
    """The stage's boards as the engine's `Board`, by number."""
    return tuple(Board.from_dict(data) for data in board_set.boards)


def board_numbers_of_match(match: Match) -> tuple[int, ...]:
    """The boards `match` plays, in order (deal i is board i of this tuple); () outside a
    duplicate stage."""
    board_set = BoardSet.objects.filter(stage_id=match.round.stage_id).first()
    if board_set is None:
        return ()
    for t in _movement(board_set)[match.round.number - 1]:
        if t.table == match.table_number:
            return t.boards
    return ()


def boards_of_match(match: Match) -> tuple[Board, ...]:
    """The boards `match` plays, as the engine's boards (the API hands them to a platform)."""
    numbers = board_numbers_of_match(match)
    if not numbers:
        return ()
    board_set = match.round.stage.board_set
    every = boards_of(board_set)
    return tuple(every[n - 1] for n in numbers)


def record_board_errors(match: Match, record: scopa.MatchRecord) -> list[PlayError]:
    """Why `record` was not played on `match`'s boards ([] if it was, or outside a duplicate
    stage)."""
    boards = boards_of_match(match)
    return board_errors(record, boards) if boards else []


def board_results(board_set: BoardSet) -> list[duplicate.BoardResult[int]]:
    """Every table's result on every board, read from the results in force (North-South is the
    match's home line, as the movement seats it)."""
    stage = board_set.stage
    by_table = {
        (t.round, t.table): t.boards for tables in _movement(board_set) for t in tables if t.plays
    }
    matches = list(
        Match.objects.filter(round__stage=stage, away__isnull=False).select_related("round")
    )
    deals = deals_in_force([m.pk for m in matches])
    rulings = {
        (a.match_id, a.board): a
        for a in BoardAdjustment.objects.filter(match__in=[m.pk for m in matches])
    }
    results = []
    for match in matches:
        boards = by_table.get((match.round.number, match.table_number or 0), ())
        assert match.home_id is not None and match.away_id is not None
        table = match.table_number or 0
        for board, deal in zip(boards, deals.get(match.pk, []), strict=False):
            ruling = rulings.get((match.pk, board))
            if ruling is not None and ruling.kind == BoardAdjustment.Kind.OTHER_DECK:
                # played on a misprepared deck: compared only with the tables that held it
                home, away = deal.points
                results.append(
                    duplicate.BoardResult(
                        board,
                        table,
                        match.home_id,
                        match.away_id,
                        home,
                        away,
                        deck=deck_key(ruling.deck),
                    )
                )
                continue
            if ruling is not None:
                # the director's ruling replaces the deal stored for the board
                adjusted = duplicate.adjusted_percentages(duplicate.Fault(ruling.fault))
                results.append(
                    duplicate.BoardResult(
                        board, table, match.home_id, match.away_id, adjusted=adjusted
                    )
                )
                continue
            home, away = deal.points
            results.append(
                duplicate.BoardResult(board, table, match.home_id, match.away_id, home, away)
            )
    return results


def deck_key(name: str) -> str:
    """Which misprepared deck a table held, as compared: case and spacing do not matter, and a
    deck left unnamed is one deck for every table that held a misprepared one."""
    return " ".join((name or "").split()).casefold() or "misprepared"


def _holders(board_set: BoardSet) -> dict[int, list[int]]:
    """Board number → the ids of the matches that hold it."""
    by_table = {
        (t.round, t.table): t.boards for tables in _movement(board_set) for t in tables if t.plays
    }
    holders: dict[int, list[int]] = {}
    for match_id, number, table in Match.objects.filter(
        round__stage=board_set.stage, away__isnull=False
    ).values_list("pk", "round__number", "table_number"):
        for board in by_table.get((number, table or 0), ()):
            holders.setdefault(board, []).append(match_id)
    return holders


def tables_holding(board_set: BoardSet) -> dict[int, int]:
    """Board number → how many tables hold it (the decks a venue prepares)."""
    return {board: len(ids) for board, ids in _holders(board_set).items()}


def open_boards(board_set: BoardSet, holders: dict[int, list[int]] | None = None) -> set[int]:
    """The boards whose cards may be shown: every table that holds them has a result in force
    (``holders``: :func:`_holders`, when the caller has it already)."""
    holders = _holders(board_set) if holders is None else holders
    done = set(
        Match.objects.filter(round__stage=board_set.stage, status=Match.Status.DONE).values_list(
            "pk", flat=True
        )
    )
    return {board for board, ids in holders.items() if all(i in done for i in ids)}


def secret_tables(board_set: BoardSet) -> set[int]:
    """The ids of the matches that hold a board still secret (a table whose result would tell
    another table how its boards go); none once the stage is closed."""
    if board_set.stage.status == Stage.Status.CLOSED:
        return set()
    holders = _holders(board_set)
    shown = open_boards(board_set, holders)
    return {i for board, ids in holders.items() if board not in shown for i in ids}


def secret_tables_of(tournament: Any) -> set[int]:
    """The ids of the matches of `tournament` that hold a board still secret, over every
    duplicate stage not yet closed (one query when it has none)."""
    return _secret_tables_among(BoardSet.objects.filter(stage__tournament=tournament))


def secret_tables_anywhere() -> set[int]:
    """:func:`secret_tables_of` over every tournament at once (one query when no duplicate
    stage is under way): for what the public reads across tournaments, the ratings."""
    return _secret_tables_among(BoardSet.objects.all())


def _secret_tables_among(board_sets: Any) -> set[int]:
    secret: set[int] = set()
    for board_set in board_sets.exclude(stage__status=Stage.Status.CLOSED).select_related("stage"):
        secret |= secret_tables(board_set)
    return secret


def board_is_open(board_set: BoardSet, number: int) -> bool:
    return number in open_boards(board_set)


def counted_boards(board_set: BoardSet) -> set[int]:
    """The boards the ranking against the field counts: the open ones while the session runs
    (a board some table has still to play would tell that table how it goes, and would rank
    the lines that played it on part of the field), every board once the stage is closed (a
    board a table never played is then factored among those that did)."""
    if board_set.stage.status == Stage.Status.CLOSED:
        return {int(data["number"]) for data in board_set.boards}
    return open_boards(board_set)


def seed_is_open(board_set: BoardSet) -> bool:
    """The seed is shown only once the session is over (the stage closed)."""
    return board_set.stage.status == Stage.Status.CLOSED


def scores(
    board_set: BoardSet, results: Sequence[duplicate.BoardResult[int]] | None = None
) -> list[duplicate.LineBoardScore[int]]:
    """Every line's score on every board played, by the stage's scoring method."""
    results = board_results(board_set) if results is None else results
    expected = duplicate_movement.expected_plays(_movement(board_set))
    if board_set.scoring == BoardSet.Scoring.DIFFERENCE:
        return duplicate.differences(results)
    return duplicate.matchpoints(results, expected)


def _vp_table(board_set: BoardSet) -> tuple[Any, int | None]:
    """The tournament's VP table for the difference method, and the number of deals it was made
    for when the round's boards fall outside its range (None: read as it is)."""
    from tournaments.services.vp import vp_table_from_model

    model = board_set.stage.tournament.vp_table
    table = vp_table_from_model(model)
    low, high = model.deals_min, model.deals_max
    boards = board_set.boards_per_round
    if (low is None or low <= boards) and (high is None or boards <= high):
        return table, None
    return table, high or low


def directions_of(board_set: BoardSet) -> dict[int, Direction] | None:
    """Each line's direction when the stage ranks one field per direction (a Mitchell), None
    when it ranks one overall (a Howell, or a Mitchell with the arrow switch: every line has
    held cards of both directions)."""
    if board_set.movement != BoardSet.Movement.MITCHELL or board_set.arrow_switch:
        return None
    return duplicate_movement.mitchell_directions([int(i) for i in board_set.start_order])


def field_ranking(
    board_set: BoardSet,
    results: Sequence[duplicate.BoardResult[int]] | None = None,
    *,
    penalties: Mapping[int, int] | None = None,
) -> list[duplicate.FieldRow[int]]:
    """The stage's lines ranked against the field (`duplicate.rank_field`): by the percentage of
    matchpoints, or by the VP of their differences from the average on the tournament's VP table
    (net of the VP `penalties` took off; by matchpoints each VP of a penalty takes one point
    off the line's percentage), per direction in a Mitchell, overall in a Howell.
    Only the `counted_boards` count: a board still secret takes no part."""
    results = board_results(board_set) if results is None else results
    counted = counted_boards(board_set)
    results = [r for r in results if r.board in counted]
    board_scores = scores(board_set, results)
    vp = None
    if board_set.scoring == BoardSet.Scoring.DIFFERENCE:
        try:
            table, reference = _vp_table(board_set)
            vp = duplicate.round_vp(board_scores, _movement(board_set), table, reference)
        except (TournamentError, ValueError) as error:
            # a table the organizer left broken (or a win/draw/loss one): the ranking falls back
            # to the differences alone rather than failing every page that shows it
            logger.warning("stage %s: no VP for the differences: %s", board_set.stage_id, error)
            vp = {}
    line_totals = duplicate.totals(board_scores)
    if vp is not None and penalties:
        vp = {line: vp.get(line, 0) - penalties.get(line, 0) for line in set(vp) | set(penalties)}
    elif penalties:
        # matchpoints: a deduction of the penalty table counts its VP as percentage points
        line_totals = duplicate.less_percent(line_totals, penalties)
    order = [int(i) for i in board_set.start_order]
    return duplicate.rank_field(order, line_totals, directions_of(board_set), vp)


def qualifying_lines(board_set: BoardSet, count: int, leave_out: set[int]) -> list[int]:
    """The ids of the `count` lines the stage sends on (`duplicate.qualifiers`: each
    direction's top place by place in a Mitchell), lines in `leave_out` (withdrawn) skipped."""
    rows = [row for row in field_ranking(board_set) if row.line not in leave_out]
    chosen = duplicate.qualifiers(rows, count)
    if len(chosen) < count:
        raise ScheduleError(
            _("“%(stage)s” has fewer than %(n)d lines to send on.")
            % {"stage": board_set.stage.name, "n": count}
        )
    return chosen


def _refuse_closed(match: Match) -> None:
    """A closed stage's scores are final, as its results are: a knock-out may be seeded from
    them."""
    stage = match.round.stage
    if stage.status == Stage.Status.CLOSED:
        raise BoardRulingError(
            _("Stage “%(stage)s” is closed: its boards' scores are final.") % {"stage": stage.name}
        )


@transaction.atomic
def rule_board(
    match: Match,
    board: int,
    *,
    kind: str,
    fault: str,
    note: str = "",
    deck: str = "",
    user: Any = None,
) -> BoardAdjustment:
    """Record the director's ruling on `board` at `match`'s table: it scores the adjusted
    percentages by `fault` instead of the deal stored for it, or (`OTHER_DECK`) the deal as
    played, compared only with the tables that held the same misprepared `deck` (a ruling
    again replaces the earlier one). Logged like every desk decision."""
    _refuse_closed(match)
    if board not in board_numbers_of_match(match):
        raise BoardRulingError(
            _("Board %(board)d is not played at this table in this round.") % {"board": board}
        )
    if kind not in BoardAdjustment.Kind.values or fault not in BoardAdjustment.Fault.values:
        raise BoardRulingError(_("Choose what happened and who was at fault from the list."))
    deck = " ".join(deck.split())[:20] if kind == BoardAdjustment.Kind.OTHER_DECK else ""
    ruling, created = BoardAdjustment.objects.update_or_create(
        match=match,
        board=board,
        defaults={
            "kind": kind,
            "fault": fault,
            "deck": deck,
            "note": note[:200],
            "created_by": user,
        },
    )
    changelog.record(
        match.round.stage.tournament,
        "board.ruled",
        match=match,
        user=user,
        board=board,
        kind=str(kind),
        fault=str(fault),
        note=note[:200],
        replaced=not created,
    )
    return ruling


@transaction.atomic
def clear_ruling(match: Match, board: int, *, user: Any = None) -> bool:
    """Withdraw the ruling on `board` at `match`'s table: the deal stored counts again."""
    _refuse_closed(match)
    deleted, _rows = BoardAdjustment.objects.filter(match=match, board=board).delete()
    if deleted:
        changelog.record(
            match.round.stage.tournament,
            "board.ruling_cleared",
            match=match,
            user=user,
            board=board,
        )
    return bool(deleted)


def traveller(board_set: BoardSet, number: int) -> list[duplicate.BoardResult[int]] | None:
    """A board's results at every table, or None while the board is still secret."""
    if not board_is_open(board_set, number):
        return None
    return [r for r in board_results(board_set) if r.board == number]


def export_doc(
    board_set: BoardSet, line_ref: Callable[[int], str | None], *, full: bool = False
) -> dict[str, Any]:
    """The stage's board set in the federation export, secrecy kept: the cards of a board only
    once every table holding it has played it (every board in the organizer's `full` export,
    which the import reads back), the seed only once the stage is closed."""
    shown = {int(data["number"]) for data in board_set.boards} if full else open_boards(board_set)
    return {
        "movement": board_set.movement,
        "scoring": board_set.scoring,
        "boards_per_round": board_set.boards_per_round,
        "arrow_switch": board_set.arrow_switch,
        # the relay table instead of the skip (absent: the skip, as older files read)
        **({"relay": True} if board_set.relay else {}),
        # a movement cut short (absent: the full movement, as older files read)
        **({"rounds": board_set.rounds} if board_set.rounds else {}),
        "start_order": [line_ref(int(line_id)) for line_id in board_set.start_order],
        "seed": board_set.seed if seed_is_open(board_set) else None,
        "boards": [
            data if data["number"] in shown else {"number": data["number"]}
            for data in board_set.boards
        ],
    }


class BoardSetImportError(ValueError):
    """An exported board set that cannot be stored again (the importer names the file)."""


def import_board_set(
    stage: Stage, data: Mapping[str, Any], line_id: Callable[[str], int | None]
) -> BoardSet:
    """Store the board set of an exported duplicate stage again: drawn from its seed when the
    export shows it (every board it shows must be the one the seed draws), else taken from its
    boards, which must then all be shown."""
    tournament = stage.tournament
    try:
        order = [line_id(ref) for ref in data["start_order"]]
        shown = [row for row in data["boards"] if "deck" in row]
        count = len(data["boards"])
        seed = data.get("seed")
        if seed is not None:
            boards = scopa.board_set(
                str(seed),
                count,
                variant=tournament.variant,
                seat_count=tournament.seats,
                options=tournament.options,
            )
            if any(Board.from_dict(row) != boards[int(row["number"]) - 1] for row in shown):
                raise BoardSetImportError(_("The boards do not come from the exported seed."))
        elif len(shown) == count:
            boards = tuple(Board.from_dict(row) for row in shown)
        else:
            raise BoardSetImportError(
                _(
                    "Some boards of “%(stage)s” are still secret in this file: export it again "
                    "once the stage is closed."
                )
                % {"stage": stage.name}
            )
        board_set = BoardSet(
            stage=stage,
            seed=str(seed or ""),
            movement=data["movement"],
            scoring=data["scoring"],
            boards_per_round=int(data["boards_per_round"]),
            boards=[board.as_dict() for board in boards],
            start_order=order,
            arrow_switch=bool(data.get("arrow_switch", False)),
            relay=uses_relay(str(data["movement"]), len(order), bool(data.get("relay", False))),
            rounds=int(data["rounds"]) if data.get("rounds") is not None else None,
        )
        # a file exported before the stage closed keeps its seed secret: the boards stand alone
        board_set.full_clean(exclude=["stage"] if seed is not None else ["stage", "seed"])
    except (KeyError, TypeError, ValueError, scopa.BoardError, ValidationError) as exc:
        if isinstance(exc, BoardSetImportError):
            raise
        logger.warning("stage %s: board set not read: %r", stage.pk, exc)
        raise BoardSetImportError(
            _("The boards of “%(stage)s” cannot be read.") % {"stage": stage.name}
        ) from exc
    board_set.save()
    return board_set
