"""The Mitchell movement for pairs: North-South lines stay, East-West lines move up one table.

Lines are placed in their start order (seed or drawn): the 1st sits North-South at table 1,
the 2nd East-West at table 1, the 3rd North-South at table 2, and so on; with an odd number of
lines the last table's East-West seat is empty, and the North-South line that faces it in a
round sits out with a bye. Each round every East-West line moves up one table (from the last
table back to table 1), so over as many rounds as there are tables each North-South line meets
each East-West line exactly once; more rounds than tables would repeat meetings and are
refused.

No skip: in bridge the East-West lines skip a table halfway when the number of tables is even,
because the boards travel the other way and would otherwise come back to them. In Scopa every
table shuffles its own deals (nothing travels), so the plain one-table move is already a
complete movement for any number of tables, even or odd.

Arrow switch: in the last round the East-West line plays as home (on the match sheet and the
table card), so the directions swap once, as a director does to turn a two-winner movement
into a one-winner event; the meetings do not change.
"""

from __future__ import annotations

import enum
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

L = TypeVar("L", bound=Hashable)


class Direction(enum.StrEnum):
    NORTH_SOUTH = "ns"
    EAST_WEST = "ew"


@dataclass(frozen=True)
class MitchellTable(Generic[L]):
    """One table in one round: ``ns`` and ``ew`` lines (``ew`` is ``None`` at the empty seat:
    the NS line has a bye); ``ns_home`` is ``False`` in an arrow-switched round."""

    table: int
    ns: L
    ew: L | None
    ns_home: bool = True

    @property
    def home(self) -> L | None:
        return self.ns if self.ns_home else self.ew

    @property
    def away(self) -> L | None:
        return self.ew if self.ns_home else self.ns


@dataclass(frozen=True)
class Seat:
    """Where a line sits in a round."""

    table: int
    direction: Direction


def table_count(n_lines: int) -> int:
    return (n_lines + 1) // 2


def directions(order: Sequence[L]) -> dict[L, Seat]:
    """Each line's start seat (table 1-based, direction) from the start order."""
    return {
        line: Seat(index // 2 + 1, Direction.NORTH_SOUTH if index % 2 == 0 else Direction.EAST_WEST)
        for index, line in enumerate(order)
    }


def ew_table(start_table: int, round_number: int, n_tables: int) -> int:
    """The table of the East-West line that starts at ``start_table``, in ``round_number``."""
    return (start_table - 1 + round_number - 1) % n_tables + 1


def seat_in_round(start: Seat, round_number: int, n_tables: int) -> Seat:
    if start.direction is Direction.NORTH_SOUTH:
        return start
    return Seat(ew_table(start.table, round_number, n_tables), Direction.EAST_WEST)


def mitchell_round(
    order: Sequence[L], round_number: int, *, rounds: int | None = None, arrow_switch: bool = False
) -> list[MitchellTable[L]]:
    """The tables of ``round_number`` (1-based) for lines in start ``order``.

    ``rounds`` is the movement's length (default: a full movement, one round per table); the
    arrow switch turns its last round.
    """
    if len(set(order)) != len(order):
        raise ValueError("a line appears twice in the start order")
    if len(order) < 2:
        raise ValueError("a Mitchell movement needs at least two lines")
    n_tables = table_count(len(order))
    rounds = n_tables if rounds is None else rounds
    if not 1 <= rounds <= n_tables:
        raise ValueError(f"a Mitchell movement of {n_tables} tables has 1 to {n_tables} rounds")
    if not 1 <= round_number <= rounds:
        raise ValueError(f"round {round_number} is not in a movement of {rounds} rounds")
    ns_home = not (arrow_switch and round_number == rounds)
    ew_at: dict[int, L] = {}
    for index in range(1, len(order), 2):
        ew_at[ew_table(index // 2 + 1, round_number, n_tables)] = order[index]
    return [
        MitchellTable(table, order[2 * (table - 1)], ew_at.get(table), ns_home)
        for table in range(1, n_tables + 1)
    ]


def mitchell_schedule(
    order: Sequence[L], *, rounds: int | None = None, arrow_switch: bool = False
) -> list[list[MitchellTable[L]]]:
    """Every round of the movement."""
    n_tables = table_count(len(order))
    rounds = n_tables if rounds is None else rounds
    return [
        mitchell_round(order, number, rounds=rounds, arrow_switch=arrow_switch)
        for number in range(1, rounds + 1)
    ]
