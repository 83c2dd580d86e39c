"""Movements that carry boards, for duplicate Scopa: who sits where and which boards each table
plays in each round.

Mitchell: lines in start order sit as in `mitchell.py` (1st North-South at table 1, 2nd East-West
at table 1, ...). North-South lines stay; East-West lines move up one table each round and the
board sets move down one table, as in a bridge Mitchell. With an even number of tables the
East-West lines would meet the same sets again halfway, so they skip one table after half the
rounds (the bridge "skip Mitchell"); then each line still plays each board at most once and, in
a full movement, every set is played once at every table.

The relay (bridge's "relay and bye-stand" Mitchell), the organizer's other choice with an even
number of tables: no one skips; the first and the last table share one board set each round
(the relay: both play its boards, each with its own decks), and a bye-stand between the middle
tables holds one set that nobody plays that round. The sets move down one stand at a time along
relay, table 2, ..., table n/2, bye-stand, table n/2 + 1, ..., table n - 1, and back to the relay:
n stands for n sets, so over the n rounds every line plays every set once, every table plays
every set once, and every North-South line meets every East-West line once (which the skip
cannot give). Two tables can play a Mitchell only this way. With an odd number of lines the last
East-West seat is empty: the North-South line facing it sits out, and that table's set is not
played that round (every set is sat out once over a full movement, so each board is played as
many times as every other).

Howell, for small fields: every line meets every other once over `lines - 1` rounds (the
circle method of a round-robin); every table plays the same set in a round, since a duplicate
Scopa venue prepares one deck per board per table (nothing has to travel), so each line plays
each set exactly once and each board is compared among all the tables of its round.

Board set s holds boards (s - 1) * k + 1 .. s * k for k boards a round; a set's boards are
consecutive, so their dealers rotate within a round as one match expects (`scopa/boards.py`).
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from .mitchell import Direction, table_count

logger = logging.getLogger(__name__)

L = TypeVar("L", bound=Hashable)


class Movement(enum.StrEnum):
    MITCHELL = "mitchell"
    HOWELL = "howell"


@dataclass(frozen=True)
class BoardTable(Generic[L]):
    """One table in one round: its lines (None: an empty seat, the other line sits out) and the
    boards it plays."""

    round: int
    table: int
    ns: L | None
    ew: L | None
    boards: tuple[int, ...]
    relay_with: int | None = None  # the table that shares these boards this round (the relay)

    @property
    def plays(self) -> bool:
        return self.ns is not None and self.ew is not None


def set_boards(board_set: int, boards_per_round: int) -> tuple[int, ...]:
    """The board numbers of set `board_set` (1-based)."""
    first = (board_set - 1) * boards_per_round + 1
    return tuple(range(first, first + boards_per_round))


def skips(n_tables: int, round_number: int) -> int:
    """1 from the round after the halfway point when the tables are even (the skip), else 0."""
    return 1 if n_tables % 2 == 0 and round_number > n_tables // 2 else 0


def relay_stands(n_tables: int) -> list[tuple[int, ...]]:
    """The stands a relay Mitchell's board sets move along, in order (a set moves to the one
    before each round): the relay (the first and the last table, sharing the set), tables 2 to
    n/2, the bye-stand (no table: nobody plays the set), tables n/2 + 1 to n - 1."""
    if n_tables < 2 or n_tables % 2:
        raise ValueError("a relay needs an even number of tables")
    half = n_tables // 2
    return [
        (1, n_tables),
        *((table,) for table in range(2, half + 1)),
        (),
        *((table,) for table in range(half + 1, n_tables)),
    ]


def relay_sets(n_tables: int, round_number: int) -> tuple[dict[int, int], int]:
    """In a relay Mitchell's round: each table's board set, and the set on the bye-stand. In
    round 1 tables 1 to n/2 play sets 1 to n/2, the bye-stand holds set n/2 + 1, tables n/2 + 1
    to n - 1 play the sets after it, and the last table shares set 1 with table 1."""
    stands = relay_stands(n_tables)
    at: dict[int, int] = {}
    resting = 0
    for board_set in range(1, n_tables + 1):
        stand = stands[(board_set - round_number) % n_tables]
        if not stand:
            resting = board_set
        for table in stand:
            at[table] = board_set
    return at, resting


def mitchell_movement(
    order: Sequence[L],
    boards_per_round: int,
    *,
    rounds: int | None = None,
    arrow_switch: bool = False,
    relay: bool = False,
) -> list[list[BoardTable[L]]]:
    """Every round of a Mitchell that carries boards (see the module docstring). With
    `arrow_switch` the lines of each table change seats in the last round (the East-West line
    sits North-South and holds those cards), as bridge's arrow switch does: every line has then
    held cards of both directions, and one ranking of all the lines compares them. With `relay`
    (an even number of tables) the first and the last table share a set and a bye-stand rests
    one, instead of the skip."""
    if len(set(order)) != len(order):
        raise ValueError("a line appears twice in the start order")
    if len(order) < 2:
        raise ValueError("a movement needs at least two lines")
    if boards_per_round < 1:
        raise ValueError("a round plays at least one board")
    n = table_count(len(order))
    if relay and n % 2:
        raise ValueError("an odd number of tables needs neither the skip nor a relay")
    if n == 2 and not relay:
        # the skip would bring the East-West lines back to the table they left
        raise ValueError("two tables play a Mitchell with boards only with the relay")
    rounds = n if rounds is None else rounds
    if not 1 <= rounds <= n:
        raise ValueError(f"a Mitchell of {n} tables has 1 to {n} rounds")
    ns_at = {table: order[2 * (table - 1)] for table in range(1, n + 1)}
    schedule = []
    for r in range(1, rounds + 1):
        skip = 0 if relay else skips(n, r)
        ew_at: dict[int, L] = {}
        for index in range(1, len(order), 2):
            start = index // 2 + 1
            ew_at[(start - 1 + r - 1 + skip) % n + 1] = order[index]
        switched = arrow_switch and r == rounds
        relayed = relay_sets(n, r)[0] if relay else {}
        tables = []
        for table in range(1, n + 1):
            ns, ew = ns_at[table], ew_at.get(table)
            if switched and ew is not None:
                ns, ew = ew, ns
            shared = None
            if relay:
                board_set = relayed[table]
                shared = {1: n, n: 1}.get(table)
            else:
                board_set = (table - 1 + r - 1) % n + 1
            boards = set_boards(board_set, boards_per_round)
            tables.append(BoardTable(r, table, ns, ew, boards, shared))
        schedule.append(tables)
    return schedule


def howell_movement(
    order: Sequence[L], boards_per_round: int, *, rounds: int | None = None
) -> list[list[BoardTable[L]]]:
    """Every round of a complete Howell: each line meets every other once; with an odd number of
    lines one sits out each round (its table is left out). `rounds`: only the first ones (a
    session cut short meets not every line)."""
    if len(set(order)) != len(order):
        raise ValueError("a line appears twice in the start order")
    if len(order) < 3:
        raise ValueError("a Howell needs at least three lines")
    if boards_per_round < 1:
        raise ValueError("a round plays at least one board")
    lines: list[L | None] = list(order)
    if len(lines) % 2:
        lines.append(None)
    fixed, circle = lines[-1], lines[:-1]
    m = len(circle)
    rounds = m if rounds is None else rounds
    if not 1 <= rounds <= m:
        raise ValueError(f"a Howell of {len(order)} lines has 1 to {m} rounds")
    schedule = []
    for r in range(rounds):
        boards = set_boards(r + 1, boards_per_round)
        pairs: list[tuple[L | None, L | None]] = [
            (fixed, circle[r]) if r % 2 else (circle[r], fixed)
        ]
        for k in range(1, len(lines) // 2):
            pairs.append((circle[(r + k) % m], circle[(r - k) % m]))
        tables = []
        number = 0
        for ns, ew in pairs:
            if ns is None or ew is None:
                continue  # the line facing the empty seat sits out
            number += 1
            tables.append(BoardTable(r + 1, number, ns, ew, boards))
        schedule.append(tables)
    return schedule


def mitchell_directions(order: Sequence[L]) -> dict[L, Direction]:
    """Each line's direction in a Mitchell: the 1st, 3rd, ... of the start order sit
    North-South and stay, the 2nd, 4th, ... East-West."""
    return {
        line: Direction.NORTH_SOUTH if index % 2 == 0 else Direction.EAST_WEST
        for index, line in enumerate(order)
    }


@dataclass(frozen=True)
class CardRow(Generic[L]):
    """One round of a line's card: where it sits, against whom, which boards."""

    round: int
    table: int | None
    direction: Direction | None
    opponent: L | None
    boards: tuple[int, ...]


def line_card(schedule: Sequence[Sequence[BoardTable[L]]], line: L) -> list[CardRow[L]]:
    """What a line's card says round by round (table None: it sits out that round)."""
    rows = []
    for number, tables in enumerate(schedule, start=1):
        row: CardRow[L] = CardRow(number, None, None, None, ())
        for t in tables:
            if t.ns == line:
                row = CardRow(number, t.table, Direction.NORTH_SOUTH, t.ew, t.boards)
            elif t.ew == line:
                row = CardRow(number, t.table, Direction.EAST_WEST, t.ns, t.boards)
        if row.opponent is None:
            row = CardRow(number, None, None, None, ())
        rows.append(row)
    return rows


def table_card(schedule: Sequence[Sequence[BoardTable[L]]], table: int) -> list[BoardTable[L]]:
    """What a table's card says: round by round, its lines and the boards to play."""
    return [t for tables in schedule for t in tables if t.table == table]


def expected_plays(schedule: Sequence[Sequence[BoardTable[L]]]) -> dict[int, int]:
    """How many times each board is played in the movement (Neuberg's E)."""
    counts: dict[int, int] = {}
    for tables in schedule:
        for t in tables:
            if t.plays:
                for board in t.boards:
                    counts[board] = counts.get(board, 0) + 1
    return counts
