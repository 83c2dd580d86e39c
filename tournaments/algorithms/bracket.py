"""Knock-out brackets: size, standard seeding, first-round byes, crossed qualification, advancing.

Slots and matches are 0-based indexes top to bottom; seeds are 1-based (seed 1 is the best).
Round 0 is the first round; a bracket of ``size`` slots has ``log2(size)`` rounds and round ``r``
has ``size >> (r + 1)`` matches.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


class Side(enum.StrEnum):
    """Which side of a match a line takes (home is listed first, the upper slot)."""

    HOME = "home"
    AWAY = "away"


@dataclass(frozen=True)
class NextSlot:
    """Where a line goes next: match ``match`` of round ``round``, on side ``side``."""

    round: int
    match: int
    side: Side


def bracket_size(n_entrants: int) -> int:
    """The smallest power of two that holds every entrant, at least 2."""
    if n_entrants < 1:
        raise ValueError(f"a bracket needs at least one entrant, got {n_entrants}")
    size = 2
    while size < n_entrants:
        size *= 2
    return size


def _check_size(size: int) -> None:
    if size < 2 or size & (size - 1):
        raise ValueError(f"bracket size must be a power of two ≥ 2, got {size}")


def n_rounds(size: int) -> int:
    """Number of rounds of a bracket of ``size`` slots (the final included, not the 3rd place)."""
    _check_size(size)
    return size.bit_length() - 1


def seed_positions(size: int) -> list[int]:
    """The seed in each slot, top to bottom, so that the top seeds meet as late as possible.

    Built by doubling: each seed ``s`` of the bracket of half the size is split into ``s`` and
    its complement ``2·half + 1 - s``. Seeds 1 and 2 land in opposite halves, 1-4 in different
    quarters, and in every first-round match the two seeds add up to ``size + 1``.
    """
    _check_size(size)
    order = [1]
    while len(order) < size:
        total = 2 * len(order) + 1
        order = [seed for s in order for seed in (s, total - s)]
    return order


def first_round(n_entrants: int) -> list[tuple[int, int | None]]:
    """First-round matches as ``(seed, seed or None)`` in bracket order, upper slot first.

    Seeds beyond ``n_entrants`` do not exist, so their opponents (always the top seeds, since
    seed ``s`` meets ``size + 1 - s``) get a bye: ``(seed, None)``.
    """
    size = bracket_size(n_entrants)
    slots = [seed if seed <= n_entrants else None for seed in seed_positions(size)]
    matches: list[tuple[int, int | None]] = []
    for upper, lower in zip(slots[::2], slots[1::2], strict=True):
        if upper is None:  # cannot happen with standard seeding; kept for safety
            upper, lower = lower, None
        assert upper is not None
        matches.append((upper, lower))
    return matches


def winner_slot(round_index: int, match_index: int, size: int) -> NextSlot | None:
    """Where the winner of a match goes: the next round's match ``match_index // 2``.

    The winner of the upper (even) match takes the home side. ``None`` after the final.
    """
    last = n_rounds(size) - 1
    if not 0 <= round_index <= last:
        raise ValueError(f"round {round_index} is not in a bracket of size {size}")
    if not 0 <= match_index < size >> (round_index + 1):
        raise ValueError(f"round {round_index} has no match {match_index}")
    if round_index == last:
        return None
    side = Side.HOME if match_index % 2 == 0 else Side.AWAY
    return NextSlot(round=round_index + 1, match=match_index // 2, side=side)


THIRD_PLACE_MATCH = -1
"""``NextSlot.match`` of the third-place match (played in the final's round)."""


def third_place_slot(round_index: int, match_index: int, size: int) -> NextSlot | None:
    """Where the loser of a match goes: the third-place match for semi-final losers, else out.

    The loser of the upper semi-final takes the home side. Brackets of size 2 have no semi-finals.
    """
    rounds = n_rounds(size)
    if rounds < 2 or round_index != rounds - 2:
        return None
    if match_index not in (0, 1):
        raise ValueError(f"the semi-finals are matches 0 and 1, got {match_index}")
    side = Side.HOME if match_index == 0 else Side.AWAY
    return NextSlot(round=rounds - 1, match=THIRD_PLACE_MATCH, side=side)


def _group_partner(group: int, n_groups: int) -> int:
    """The group whose qualifiers cross with ``group``'s: A↔B, C↔D, … (odd counts: A→B→C→A)."""
    if n_groups % 2 == 0:
        return group ^ 1
    return (group + 1) % n_groups


def crossed_qualifiers(group_rankings: Sequence[Sequence[T]], per_group: int) -> list[T]:
    """Seeding order (seed 1 first) of the top ``per_group`` of each group, crossed.

    Seeds go tier by tier: every group's winner (in group order A, B, C …), then every runner-up,
    and so on, so a group winner always outranks a runner-up. Inside a tier the order is chosen so
    that each first-round match (seed ``s`` against ``size + 1 - s``) pits a line against the
    partner group's line: groups pair up A↔B, C↔D, … (with an odd number of groups, A→B, B→C, …,
    last→A). With two qualifiers from 2, 4, 8 … groups this gives exactly A1 v B2, B1 v A2,
    C1 v D2, D1 v C2 …, and the two qualifiers of a group land in opposite halves of the bracket
    (they can only meet in the final; not guaranteed for other shapes).
    With K qualifiers, the k-th of a group meets the partner group's (K+1-k)-th when the bracket is
    full. When the preferred opponent is already placed, any line from another group is taken,
    and a line of the same group only when nothing else is left. Byes (non-power-of-two counts)
    fall to the top seeds, i.e. group winners.
    """
    if per_group < 1:
        raise ValueError(f"need at least one qualifier per group, got {per_group}")
    n_groups = len(group_rankings)
    for index, ranking in enumerate(group_rankings):
        if len(ranking) < per_group:
            raise ValueError(
                f"group {index + 1} ranks {len(ranking)} lines, fewer than {per_group} qualifiers"
            )
    if n_groups == 0:
        return []
    n_entrants = n_groups * per_group
    size = bracket_size(n_entrants)
    # tiers[k] = remaining (group, line) of the (k+1)-th placed, in group order
    tiers: list[list[tuple[int, T]]] = [
        [(group, ranking[k]) for group, ranking in enumerate(group_rankings)]
        for k in range(per_group)
    ]
    seeds: dict[int, tuple[int, T]] = {}

    def tier_of(seed: int) -> list[tuple[int, T]]:
        return tiers[(seed - 1) // n_groups]

    def take(seed: int, prefer_group: int | None, avoid_group: int | None) -> None:
        pool = tier_of(seed)
        choice = None
        if prefer_group is not None:
            choice = next((c for c in pool if c[0] == prefer_group), None)
        if choice is None and avoid_group is not None:
            choice = next((c for c in pool if c[0] != avoid_group), None)
        if choice is None:
            choice = pool[0]
        pool.remove(choice)
        seeds[seed] = choice

    for seed in range(1, n_entrants + 1):
        if seed in seeds:
            continue
        opponent = size + 1 - seed
        same_tier_opponent = opponent <= n_entrants and tier_of(opponent) is tier_of(seed)
        pool = tier_of(seed)
        if same_tier_opponent and len({group for group, _ in pool}) > 1:
            # keep a line of another group in the pool for the opponent
            pick = next(
                c for c in pool if any(other[0] != c[0] for other in pool if other is not c)
            )
            pool.remove(pick)
            seeds[seed] = pick
        else:
            take(seed, None, None)
        if opponent <= n_entrants and opponent not in seeds:
            group = seeds[seed][0]
            take(opponent, _group_partner(group, n_groups), group)
    return [seeds[seed][1] for seed in range(1, n_entrants + 1)]


def bracket_slots(seeded: Sequence[T]) -> list[T | None]:
    """The bracket's first-round slots filled with entrants (seed 1 first), ``None`` for a bye."""
    size = bracket_size(len(seeded))
    return [seeded[s - 1] if s <= len(seeded) else None for s in seed_positions(size)]
