"""Round-robin schedules (FIDE Berger tables) and seeded distribution of lines into groups.

Positions are 1-based starting numbers, as in the FIDE Handbook C.05 Annex 1 ("Berger Tables for
Round-Robin Tournaments"); the ORM layer maps position ``k`` to the line drawn to number ``k``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

Pairing = tuple[int, int | None]
"""``(home, away)``; ``away`` is ``None`` for a bye."""


def _berger_even(n: int) -> list[list[tuple[int, int]]]:
    """The FIDE Berger table for an even ``n``, boards in the published order.

    Round 1 is ``1-n, 2-(n-1), …``. Each following round adds ``n/2`` to every number but ``n``
    (counting modulo ``n-1`` within 1..n-1), board by board, keeping home/away; on the first board
    number ``n`` changes side every round. This reproduces the published tables exactly (tested
    against them for 4..16).
    """
    half = n // 2
    rounds: list[list[tuple[int, int]]] = [[(i, n + 1 - i) for i in range(1, half + 1)]]
    for _ in range(n - 2):
        previous = rounds[-1]
        shifted: list[tuple[int, int]] = []
        for home, away in previous:
            if n in (home, away):
                other = away if home == n else home
                other = (other - 1 + half) % (n - 1) + 1
                # number n alternates colour: it was home, now away, and vice versa
                shifted.append((other, n) if home == n else (n, other))
            else:
                shifted.append(((home - 1 + half) % (n - 1) + 1, (away - 1 + half) % (n - 1) + 1))
        rounds.append(shifted)
    return rounds


def berger_rounds(n: int, *, double: bool = False) -> list[list[Pairing]]:
    """All rounds of a round robin among positions ``1..n``, as the FIDE Berger tables give them.

    For an odd ``n`` the table for ``n + 1`` is used and a game against ``n + 1`` becomes the bye
    ``(pos, None)``, left on the board where FIDE prints it (board 1): number byes out of the tables
    when assigning table numbers. With ``double=True`` a second cycle follows, the first repeated
    with home and away reversed (byes stay ``(pos, None)``). FIDE also *recommends* swapping the
    last two rounds of the first cycle in a double round robin; we do not, so that round k of the
    second cycle is round k of the first with the sides swapped.
    """
    if n < 2:
        raise ValueError(f"a round robin needs at least 2 lines, got {n}")
    size = n + 1 if n % 2 else n

    def with_bye(home: int, away: int) -> Pairing:
        if away == size != n:
            return (home, None)
        if home == size != n:
            return (away, None)
        return (home, away)

    first_cycle = [[with_bye(home, away) for home, away in round_] for round_ in _berger_even(size)]
    if not double:
        return first_cycle
    second_cycle: list[list[tuple[int, int | None]]] = [
        [(home, None) if away is None else (away, home) for home, away in round_]
        for round_ in first_cycle
    ]
    return first_cycle + second_cycle


def snake_groups(seeded: Sequence[T], n_groups: int) -> list[list[T]]:
    """Deal seeded entries over groups in serpentine order: A B C D D C B A A B …

    Snake order balances the groups' strength: the best of group A gets the weakest of the next
    tier. Group sizes differ by at most one.
    """
    if n_groups < 1:
        raise ValueError(f"need at least one group, got {n_groups}")
    groups: list[list[T]] = [[] for _ in range(n_groups)]
    for index, entry in enumerate(seeded):
        tier, offset = divmod(index, n_groups)
        group = offset if tier % 2 == 0 else n_groups - 1 - offset
        groups[group].append(entry)
    return groups
