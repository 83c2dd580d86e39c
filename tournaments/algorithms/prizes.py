"""Prize allocation and rankings per category, as plain functions over plain data.

The federations' rule: prizes are handed out in order of value, each to the highest-ranked
eligible line not yet awarded, so a line takes only its best prize (a woman who wins overall
takes the overall prize, and the women's first prize goes to the next woman).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

logger = logging.getLogger(__name__)

OVERALL = ""
"""The category of an overall prize: every line is eligible."""


@dataclass(frozen=True)
class PrizeSpec:
    """One prize: ``category`` ``OVERALL`` or a category's value; ``key`` names it to the
    caller."""

    key: int
    value: int
    place: int
    category: str = OVERALL


@dataclass(frozen=True)
class RankedLine:
    """One line of the final ranking (best first), with the category it plays in."""

    line: int
    rank: int
    category: str = ""


def handing_order(prizes: Sequence[PrizeSpec]) -> list[PrizeSpec]:
    """Most valuable first; at equal value the better place, then overall before a category."""
    return sorted(
        prizes, key=lambda p: (-p.value, p.place, p.category != OVERALL, p.category, p.key)
    )


def eligible(prize: PrizeSpec, line: RankedLine) -> bool:
    return prize.category == OVERALL or line.category == prize.category


def allocate(prizes: Sequence[PrizeSpec], ranking: Sequence[RankedLine]) -> dict[int, int | None]:
    """``{prize key: line}``, ``None`` for a prize no eligible line is left for.

    ``ranking`` is in ranking order (its order breaks shared ranks, as the standings' lots do).
    """
    awarded: set[int] = set()
    result: dict[int, int | None] = {}
    for prize in handing_order(prizes):
        winner = next(
            (x.line for x in ranking if x.line not in awarded and eligible(prize, x)), None
        )
        result[prize.key] = winner
        if winner is not None:
            awarded.add(winner)
    return result


def category_ranking(ranking: Sequence[RankedLine], category: str) -> list[RankedLine]:
    """The overall ranking filtered to one category, ranks renumbered: a line's rank is one more
    than the number of the category's lines ranked strictly above it (shared ranks stay
    shared)."""
    kept = [x for x in ranking if x.category == category]
    return [
        RankedLine(x.line, 1 + sum(1 for y in kept if y.rank < x.rank), x.category) for x in kept
    ]


def categories_of(ranking: Sequence[RankedLine]) -> list[str]:
    """The categories played in, in order of first appearance; none for uncategorised lines."""
    seen: dict[str, None] = {}
    for x in ranking:
        if x.category:
            seen.setdefault(x.category, None)
    return list(seen)
