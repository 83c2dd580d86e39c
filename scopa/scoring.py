"""Scoring a deal, as independent point units so a timeout can tell secured points from loose ones.

A unit is (category, value, points per side). Categories are the stable breakdown keys:
classic `scope carte denari settebello primiera rebello napola`; scopa-15
`scope denari settebello sette carte poche_carte`. Option categories appear only when enabled.
"""

from collections.abc import Sequence
from functools import lru_cache

from .cards import (
    BIT,
    DENARI_MASK,
    PRIMIERA_OF_SUIT_MASK,
    REBELLO,
    SETTEBELLO,
    SEVENS_MASK,
)
from .rules import Rules
from .variants import get_variant

# A point unit: (category, value, points per side).
Unit = tuple[str, int, list[int]]
# Points per category of one side in one deal (`scope`, `carte`, `primiera`, ...).
Breakdown = dict[str, int]


def categories(rules: Rules) -> tuple[str, ...]:
    """The breakdown keys of a deal under `rules`, as the variant registry lists them."""
    return _category_keys(rules.variant, rules.rebello, rules.napola)


@lru_cache(maxsize=32)
def _category_keys(variant: str, rebello: bool, napola: bool) -> tuple[str, ...]:
    return get_variant(variant).category_keys({"rebello": rebello, "napola": napola})


def _strict_best(values: list[int]) -> int | None:
    """Index of the strictly highest value, None on a tie at the top."""
    best = max(values)
    if values.count(best) != 1:
        return None
    return values.index(best)


def _one(side_count: int, winner: int | None, value: int = 1) -> list[int]:
    points = [0] * side_count
    if winner is not None:
        points[winner] = value
    return points


def _holder(masks: Sequence[int], card_bit: int) -> int | None:
    for side, mask in enumerate(masks):
        if mask & card_bit:
            return side
    return None


def primiera_of(mask: int) -> tuple[int, int]:
    """(number of suits held, sum of the best primiera card of each held suit)."""
    suits = 0
    total = 0
    for shift in (0, 10, 20, 30):
        value = PRIMIERA_OF_SUIT_MASK[mask >> shift & 1023]
        if value:
            suits += 1
            total += value
    return suits, total


def primiera_winner(masks: Sequence[int], compare_present: bool) -> int | None:
    """Highest primiera; a side lacking a suit cannot win it unless every side lacks one and the
    option `compare_present` says to compare the suits each side holds."""
    complete = []
    present = []
    for mask in masks:
        suits, total = primiera_of(mask)
        complete.append(total if suits == 4 else -1)
        present.append(total)
    if max(complete) >= 0:
        return _strict_best(complete)
    if compare_present:
        return _strict_best(present)
    return None


def napola_run(mask: int) -> int:
    """How many consecutive denari from the ace the side holds (3+ makes a napola)."""
    run = 0
    denari = mask & DENARI_MASK
    while run < 10 and denari >> run & 1:
        run += 1
    return run


def deal_units(rules: Rules, masks: Sequence[int]) -> list[Unit]:
    """Every point unit of a deal except scope: [(category, value, points per side)]."""
    n = len(masks)
    counts = [m.bit_count() for m in masks]
    denari = [(m & DENARI_MASK).bit_count() for m in masks]
    units: list[Unit] = []
    if rules.fifteen:
        units.append(("denari", 1, _one(n, _strict_best(denari))))
        all_denari = denari.index(10) if 10 in denari else None
        units.append(("denari", 1, _one(n, all_denari)))
        units.append(("settebello", 1, _one(n, _holder(masks, BIT[SETTEBELLO]))))
        sevens = [(m & SEVENS_MASK).bit_count() for m in masks]
        units.append(("sette", 1, _one(n, _strict_best(sevens))))
        # Reading of seed 002 kept here only: all four sevens make all_sevens_points in all,
        # settebello and most-sevens included.
        extra = rules.all_sevens_points - 2
        all_sevens = sevens.index(4) if 4 in sevens else None
        units.append(("sette", extra, _one(n, all_sevens, extra)))
        units.append(("carte", 1, _one(n, _strict_best(counts))))
        for short_side in range(n):
            points = [0] * n
            if counts[short_side] < 10:
                points = [0 if side == short_side else 2 for side in range(n)]
            units.append(("poche_carte", 2, points))
        return units
    units.append(("carte", 1, _one(n, _strict_best(counts))))
    units.append(("denari", 1, _one(n, _strict_best(denari))))
    units.append(("settebello", 1, _one(n, _holder(masks, BIT[SETTEBELLO]))))
    units.append(("primiera", 1, _one(n, primiera_winner(masks, rules.compare_present))))
    if rules.rebello:
        units.append(("rebello", 1, _one(n, _holder(masks, BIT[REBELLO]))))
    if rules.napola:
        runs = [napola_run(m) for m in masks]
        for length in range(3, 11):
            owner = next((s for s, run in enumerate(runs) if run >= length), None)
            value = 3 if length == 3 else 1
            units.append(("napola", value, _one(n, owner, value)))
    return units


def score_deal(
    rules: Rules, masks: Sequence[int], scope: Sequence[int]
) -> tuple[list[int], list[Breakdown]]:
    """Points per side and the breakdown per side {category: points} of a finished deal.

    The classic variants are computed directly (this runs once per deal in the verifier's hot
    path); a test keeps it equal to the sum of `deal_units`.
    """
    n = len(masks)
    if rules.fifteen:
        return _score_from_units(rules, masks, scope)
    counts = []
    denari_counts = []
    for mask in masks:  # plain loops: a comprehension costs a frame per call in CPython 3.11
        counts.append(mask.bit_count())
        denari_counts.append((mask & DENARI_MASK).bit_count())
    carte = _strict_best(counts)
    denari = _strict_best(denari_counts)
    settebello = _holder(masks, BIT[SETTEBELLO])
    primiera = primiera_winner(masks, rules.compare_present)
    rebello = _holder(masks, BIT[REBELLO]) if rules.rebello else None
    breakdown = []
    points = []
    for side in range(n):
        row = {
            "scope": scope[side],
            "carte": 1 if carte == side else 0,
            "denari": 1 if denari == side else 0,
            "settebello": 1 if settebello == side else 0,
            "primiera": 1 if primiera == side else 0,
        }
        if rules.rebello:
            row["rebello"] = 1 if rebello == side else 0
        if rules.napola:
            run = napola_run(masks[side])
            row["napola"] = run if run >= 3 else 0
        breakdown.append(row)
        points.append(sum(row.values()))
    return points, breakdown


def _score_from_units(
    rules: Rules, masks: Sequence[int], scope: Sequence[int]
) -> tuple[list[int], list[Breakdown]]:
    n = len(masks)
    cats = categories(rules)
    breakdown = [dict.fromkeys(cats, 0) for _ in range(n)]
    for side in range(n):
        breakdown[side]["scope"] = scope[side]
    for category, _value, points in deal_units(rules, masks):
        for side in range(n):
            if points[side]:
                breakdown[side][category] += points[side]
    return [sum(b.values()) for b in breakdown], breakdown


def interrupted_deal(
    rules: Rules, masks: Sequence[int], scope: Sequence[int], loose: int
) -> tuple[list[int], list[Breakdown], list[tuple[str, int]]]:
    """Score a deal stopped by a timeout or abandon.

    A unit is secured when it ends the same for every way of sharing out the loose cards; the
    scoring rules are monotone, so giving all loose cards to one side at a time covers the
    extremes. Secured units and scope made stay; the value of every other unit goes to each
    opponent of the offender (the extra scopa is added by the caller).
    Returns (points, breakdown, unsecured [(category, value)]) before the penalty.
    """
    n = len(masks)
    cats = categories(rules)
    breakdown = [dict.fromkeys(cats, 0) for _ in range(n)]
    for side in range(n):
        breakdown[side]["scope"] = scope[side]
    extremes = []
    for receiver in range(n):
        shared = list(masks)
        shared[receiver] |= loose
        extremes.append(deal_units(rules, shared))
    unsecured = []
    for index, (category, value, points) in enumerate(extremes[0]):
        if all(units[index][2] == points for units in extremes[1:]):
            for side in range(n):
                breakdown[side][category] += points[side]
        else:
            unsecured.append((category, value))
    return [sum(b.values()) for b in breakdown], breakdown, unsecured
