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
from collections.abc import Collection, Hashable, Mapping, Sequence
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


# --------------------------------------------------------------------------- clubs kept apart


def club_key(club: str) -> str:
    """How two clubs as typed compare: case and spacing do not matter; empty is no club."""
    return " ".join((club or "").split()).casefold()


@dataclass(frozen=True)
class ApartSeating(Generic[L]):
    """A start order that seats club-mates (and lines the organizer keeps apart) in one
    direction, and the meetings the movement still has: ``club_meetings`` and
    ``forbidden_meetings`` are the pairs that meet in its rounds, each (North-South,
    East-West); ``oversized`` the clubs with more lines than a direction holds."""

    order: list[L]
    club_meetings: list[tuple[L, L]]
    forbidden_meetings: list[tuple[L, L]]
    oversized: list[str]

    @property
    def apart(self) -> bool:
        return not self.club_meetings and not self.forbidden_meetings


class _Blocks(Generic[L]):
    """Union-find over lines: the lines that must share a direction."""

    def __init__(self, lines: Sequence[L]) -> None:
        self.parent = {line: line for line in lines}

    def find(self, line: L) -> L:
        root = line
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[line] != root:
            self.parent[line], line = root, self.parent[line]
        return root

    def join(self, a: L, b: L) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra

    def groups(self, order: Sequence[L]) -> list[list[L]]:
        """The blocks, each in start order, in the order of their first line."""
        by_root: dict[L, list[L]] = {}
        for line in order:
            by_root.setdefault(self.find(line), []).append(line)
        return list(by_root.values())


def _achievable(sizes: Sequence[int], limit: int) -> dict[int, list[int]]:
    """Every total up to ``limit`` some of ``sizes`` add up to, with the indices used."""
    reach: dict[int, tuple[int, int]] = {0: (-1, -1)}
    for index, size in enumerate(sizes):
        for total in sorted(reach, reverse=True):
            new = total + size
            if new <= limit and new not in reach:
                reach[new] = (index, total)
    chosen: dict[int, list[int]] = {}
    for total in reach:
        used, t = [], total
        while t:
            index, t = reach[t]
            used.append(index)
        chosen[total] = used
    return chosen


def _club_cost(ns: Collection[L], lines: Sequence[L], clubs: Mapping[L, str]) -> int:
    """Pairs of club-mates seated in opposite directions."""
    counts: dict[str, list[int]] = {}
    for line in lines:
        club = clubs.get(line, "")
        if club:
            pair = counts.setdefault(club, [0, 0])
            pair[0 if line in ns else 1] += 1
    return sum(a * b for a, b in counts.values())


def _unit_options(
    blocks: list[list[L]], clubs: Mapping[L, str], limit: int
) -> dict[int, tuple[int, list[int]]]:
    """For a set of blocks linked by clubs: for each count of lines seated North-South, the
    fewest club-mates split (exactly, unless the unit is large and mixes clubs) and the blocks
    that go North-South."""
    lines = [line for block in blocks for line in block]
    unit_clubs = {clubs.get(line, "") for line in lines} - {""}
    sizes = [len(block) for block in blocks]
    options: dict[int, tuple[int, list[int]]] = {}
    if len(unit_clubs) > 1 and len(blocks) <= 12:
        for mask in range(1 << len(blocks)):
            chosen = [i for i in range(len(blocks)) if mask >> i & 1]
            count = sum(sizes[i] for i in chosen)
            if count > limit:
                continue
            ns = {line for i in chosen for line in blocks[i]}
            cost = _club_cost(ns, lines, clubs)
            if count not in options or cost < options[count][0]:
                options[count] = (cost, chosen)
        return options
    if len(unit_clubs) <= 1:
        # one club: the cost k·(S−k) of k club lines North-South is least at the fewest or the
        # most club lines a count allows (it is concave in k): keep both, per count
        members = [sum(1 for line in block if clubs.get(line, "")) for block in blocks]
        total = sum(members)
        for count, (low, high) in _extremes(sizes, members, limit).items():
            for k, chosen in (low, high):
                cost = k * (total - k)
                if count not in options or cost < options[count][0]:
                    options[count] = (cost, chosen)
        return options
    for count, chosen in _achievable(sizes, limit).items():
        ns = {line for i in chosen for line in blocks[i]}
        options[count] = (_club_cost(ns, lines, clubs), chosen)
    return options


def _extremes(
    sizes: Sequence[int], members: Sequence[int], limit: int
) -> dict[int, tuple[tuple[int, list[int]], tuple[int, list[int]]]]:
    """For every total of ``sizes`` up to ``limit``: the fewest and the most ``members`` a
    choice of items with that total has, each with the items chosen."""
    low: dict[int, int] = {0: 0}
    high: dict[int, int] = {0: 0}
    layers: list[tuple[dict[int, bool], dict[int, bool]]] = []  # total -> item taken
    for size, member in zip(sizes, members, strict=True):
        new_low, new_high = dict(low), dict(high)
        took_low = dict.fromkeys(low, False)
        took_high = dict.fromkeys(high, False)
        for total in low:
            new = total + size
            if new > limit:
                continue
            if new not in new_low or low[total] + member < new_low[new]:
                new_low[new], took_low[new] = low[total] + member, True
            if new not in new_high or high[total] + member > new_high[new]:
                new_high[new], took_high[new] = high[total] + member, True
        low, high = new_low, new_high
        layers.append((took_low, took_high))

    def chosen(total: int, side: int) -> list[int]:
        items = []
        for index in range(len(sizes) - 1, -1, -1):
            if layers[index][side].get(total, False):
                items.append(index)
                total -= sizes[index]
        return items

    return {
        total: ((low[total], chosen(total, 0)), (high[total], chosen(total, 1))) for total in low
    }


def _knapsack(
    units: list[dict[int, tuple[int, list[int]]]], target: int
) -> list[tuple[int, list[int]]] | None:
    """One option per unit, adding up to ``target`` North-South lines at the least cost."""
    best: dict[int, int] = {0: 0}
    choices: list[dict[int, tuple[int, int]]] = []  # per unit: total -> (its count, previous)
    for options in units:
        new_best: dict[int, int] = {}
        picked: dict[int, tuple[int, int]] = {}
        for total, cost in best.items():
            for count, (unit_cost, _chosen) in options.items():
                new = total + count
                if new > target:
                    continue
                value = cost + unit_cost
                if new not in new_best or value < new_best[new]:
                    new_best[new] = value
                    picked[new] = (count, total)
        best = new_best
        choices.append(picked)
    if target not in best:
        return None
    result: list[tuple[int, list[int]]] = []
    total = target
    for options, picked in zip(reversed(units), reversed(choices), strict=True):
        count, total = picked[total]
        result.append((count, options[count][1]))
    result.reverse()
    return result


def _split_by_search(
    order: Sequence[L], clubs: Mapping[L, str], forbidden: set[frozenset[L]], ns_size: int
) -> set[L]:
    """When even the forbidden pairs cannot all share a direction: a local search that splits
    as few of them as it can, then as few club-mates (small fields; larger ones keep the
    first answer)."""
    ns = set(order[:ns_size])

    def cost(side: set[L]) -> tuple[int, int]:
        split = sum(1 for pair in forbidden if len(pair & side) == 1)
        return split, _club_cost(side, order, clubs)

    if len(order) > 60:
        return ns
    current = cost(ns)
    improved = True
    while improved:
        improved = False
        for a in [line for line in order if line in ns]:
            for b in [line for line in order if line not in ns]:
                trial = (ns - {a}) | {b}
                trial_cost = cost(trial)
                if trial_cost < current:
                    ns, current, improved = trial, trial_cost, True
                    break
            if improved:
                break
    return ns


def seat_apart(
    order: Sequence[L],
    clubs: Mapping[L, str] | None = None,
    forbidden: Collection[tuple[L, L]] | Collection[frozenset[L]] = (),
    *,
    rounds: int | None = None,
) -> ApartSeating[L]:
    """A start order for :func:`mitchell_round` that seats each club's lines (``clubs``: a club
    key per line, empty or missing for none) and each ``forbidden`` pair in one direction, so
    they never meet; the direction sizes stay balanced (North-South has the extra line of an
    odd field). Each direction keeps the lines in their ``order`` (seeds stay spread).

    When that is impossible (a club has more lines than a direction holds, or the clubs do not
    add up to the two halves), forbidden pairs are kept apart first, then as few club-mates as
    possible meet (the fewest pairs of club-mates in opposite directions: exact unless forbidden
    pairs link clubs into a group of more than 12 blocks); the answer lists the meetings left in
    the movement's ``rounds`` (default: a full movement)."""
    order = list(order)
    if len(set(order)) != len(order):
        raise ValueError("a line appears twice in the start order")
    clubs = {line: clubs.get(line, "") for line in order} if clubs else {}
    present = set(order)
    pairs = {frozenset(pair) for pair in forbidden}
    pairs = {pair for pair in pairs if len(pair) == 2 and pair <= present}
    n_lines = len(order)
    ns_size = (n_lines + 1) // 2

    blocks = _Blocks(order)
    for pair in pairs:
        a, b = tuple(pair)
        blocks.join(a, b)
    forbidden_blocks = blocks.groups(order)
    linked = _Blocks(order)
    for a, b in (tuple(pair) for pair in pairs):
        linked.join(a, b)
    first_of_club: dict[str, L] = {}
    for line in order:
        club = clubs.get(line, "")
        if club:
            linked.join(first_of_club.setdefault(club, line), line)

    ns: set[L] | None = None
    # everything that should share a direction, as whole units: no meeting at all; units whose
    # lines start North-South come first, so that lines keep their start direction when they can
    position = {line: index for index, line in enumerate(order)}
    units = sorted(
        linked.groups(order),
        key=lambda unit: (
            -sum(1 if position[line] % 2 == 0 else -1 for line in unit),
            position[unit[0]],
        ),
    )
    chosen = _achievable([len(unit) for unit in units], ns_size).get(ns_size)
    if chosen is not None:
        ns = {line for index in chosen for line in units[index]}
    else:
        # forbidden blocks whole, the fewest club-mates split
        unit_of = {line: index for index, unit in enumerate(units) for line in unit}
        grouped: list[list[list[L]]] = [[] for _ in units]
        for block in forbidden_blocks:
            grouped[unit_of[block[0]]].append(block)
        options = [_unit_options(unit_blocks, clubs, ns_size) for unit_blocks in grouped]
        picked = _knapsack(options, ns_size)
        if picked is not None:
            ns = {
                line
                for unit_blocks, (_count, indices) in zip(grouped, picked, strict=True)
                for index in indices
                for line in unit_blocks[index]
            }
        else:
            ns = _split_by_search(order, clubs, pairs, ns_size)

    north = [line for line in order if line in ns]
    east = [line for line in order if line not in ns]
    seated: list[L] = []
    for index in range(ns_size):
        seated.append(north[index])
        if index < len(east):
            seated.append(east[index])
    sizes: dict[str, int] = {}
    for line in order:
        if clubs.get(line):
            sizes[clubs[line]] = sizes.get(clubs[line], 0) + 1
    oversized = sorted(club for club, size in sizes.items() if size > ns_size)
    club_meetings: list[tuple[L, L]] = []
    forbidden_meetings: list[tuple[L, L]] = []
    if n_lines >= 2:
        n_tables = table_count(n_lines)
        length = n_tables if rounds is None else max(1, min(rounds, n_tables))
        for tables in mitchell_schedule(seated, rounds=length):
            for table in tables:
                if table.ew is None:
                    continue
                meeting = (table.ns, table.ew)
                if frozenset(meeting) in pairs:
                    forbidden_meetings.append(meeting)
                elif clubs.get(table.ns) and clubs.get(table.ns) == clubs.get(table.ew):
                    club_meetings.append(meeting)
    return ApartSeating(seated, club_meetings, forbidden_meetings, oversized)
