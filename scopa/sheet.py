"""The deal-sheet referee: refuses a hand-entered deal that no play of the variant can give.

A score sheet gives, for one deal, each side's points by category. Whatever the cards were:

- only the variant's categories exist (with the options in force);
- a category that goes to one side at most (carte, denari, settebello, primiera, rebello, napola,
  sette, ...) is not given to two sides in one deal, and no side gets more than the category can
  give in a deal (carte 1, scopa-15's denari 2, napola 3 to 10, ...);
- the scope fit in a deal (`scope_bound` says how the limits are derived);
- a few points bring others with them (napola to the seven of denari brings the settebello).

An interrupted deal (a timeout or abandon: the penalty of docs/match-record.md) splits categories
into their separate points, so there each point, not each category, goes to one side, and each
opponent of the offender gets one more scopa.

`check_deal` returns the problems as `SheetError` values with the referee's sentence in Italian
and English; it raises nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from .errors import SHEET_MESSAGES, format_message
from .variants import CATEGORY_LABELS, Category, Label, Variant, category_label, get_variant

logger = logging.getLogger(__name__)

CARDS = 40
TABLE_CARDS = 4
PLAYS_PER_DEAL = CARDS - TABLE_CARDS
RANK_SUM = 4 * sum(range(1, 11))
"""The ranks of the 40 cards add up to 220."""


def sides_for(seat_count: int) -> int:
    """4 seats make 2 pairs, 6 seats 2 trios; 2 and 3 seats play one side each."""
    return 2 if seat_count in (2, 4, 6) else seat_count


# --------------------------------------------------------------------------- scope


@dataclass(frozen=True, slots=True)
class ScopeBound:
    """Which scope counts per side one deal can give.

    Derivation, for `PLAYS_PER_DEAL` = 36 plays (40 cards, 4 on the table) with the seats taking
    turns in order (play p is made by the seat p after the dealer, so two sides alternate):
    a scopa empties the table, and from an empty table nothing can be taken, so two scope never
    come on consecutive plays; the last play of the deal is never a scopa. In scopa-15 the
    dealer's fifteen scores one or two scope before the first play and leaves the table empty
    (so the first play cannot be a scopa). `counts` is every per-side tuple a dealer and a set
    of scopa plays obeying this can give (any seat may have dealt).
    In scopa-15 every scopa also takes cards whose ranks, with the played card, add up to 15
    (the dealer's double, to 30), and the cards never captured add up to 220 mod 15 = 10 at
    least, so a deal holds at most (220 - 10) // 15 = 14 scope (`total`).
    Classic, two sides: one side at most 18 (plays 1, 3, ..., 35), both sides together at most
    17 when both score (a scopa of the other side needs an odd gap of at least 3 plays).
    """

    sides: int
    counts: frozenset[tuple[int, ...]]
    per_side: int
    total: int

    def allows(self, counts: Sequence[int]) -> bool:
        return tuple(counts) in self.counts and sum(counts) <= self.total


def _play_order_counts(
    seat_count: int, sides: int, dealer_fifteen: bool
) -> frozenset[tuple[int, ...]]:
    found: set[tuple[int, ...]] = set()
    for dealer in range(seat_count):
        dealer_side = dealer % sides
        start: set[tuple[tuple[int, ...], bool]] = {((0,) * sides, False)}
        if dealer_fifteen:
            for extra in (1, 2):
                fifteen = [0] * sides
                fifteen[dealer_side] = extra
                # the dealer's fifteen empties the table: play 1 cannot be a scopa
                start.add((tuple(fifteen), True))
        states = start
        for play in range(1, PLAYS_PER_DEAL + 1):
            side = (dealer + play) % seat_count % sides
            last_play = play == PLAYS_PER_DEAL
            following: set[tuple[tuple[int, ...], bool]] = set()
            for counts, after_scopa in states:
                following.add((counts, False))
                if not after_scopa and not last_play:
                    more = list(counts)
                    more[side] += 1
                    following.add((tuple(more), True))
            states = following
        found.update(counts for counts, _after in states)
    return frozenset(found)


@lru_cache(maxsize=16)
def scope_bound(variant_key: str, seat_count: int) -> ScopeBound:
    """The scope counts one deal of `variant_key` with `seat_count` seats can give."""
    variant = get_variant(variant_key)
    sides = sides_for(seat_count)
    counts = _play_order_counts(seat_count, sides, variant.dealer_fifteen)
    total = max(sum(c) for c in counts)
    if variant.fifteen:
        leftover = RANK_SUM % 15
        total = min(total, (RANK_SUM - leftover) // 15)
        counts = frozenset(c for c in counts if sum(c) <= total)
    per_side = max(max(c) for c in counts)
    return ScopeBound(sides, counts, per_side, total)


_WHY_PLAYS = Label(
    "dopo una scopa la tavola è vuota e la giocata seguente non può prendere; "
    "l'ultima giocata non fa scopa",
    "after a scopa the table is empty and the next play cannot capture; "
    "the last play is never a scopa",
)
_WHY_FIFTEEN = Label(
    "ogni scopa prende carte che con quella giocata fanno 15, e le 40 carte fanno 220",
    "every scopa takes cards that make 15 with the card played, and the 40 cards make 220",
)


# --------------------------------------------------------------------------- errors


@dataclass(frozen=True, slots=True)
class SheetError:
    """One thing a sheet's deal gets wrong: stable `code`, the side it is about (or None) and the
    figures of the sentence. Category keys and the variant are rendered per language."""

    code: str
    side: int | None = None
    category: str | None = None
    variant: str | None = None
    params: Mapping[str, object] = field(default_factory=dict)

    def message(self, lang: str = "it", side_names: Sequence[str] | None = None) -> str:
        params: dict[str, object] = dict(self.params)
        if self.side is not None:
            params["side"] = _side_name(self.side, lang, side_names)
        if self.category is not None:
            params["category"] = category_label(self.category, lang)
        if self.variant is not None:
            params["variant"] = get_variant(self.variant).name(lang)
        for key in ("why", "implied"):
            label = params.pop(key, None)
            if isinstance(label, Label):
                params[f"{key}_it"] = label.it
                params[f"{key}_en"] = label.en
        if self.code == "scope_combination":
            counts = self.params.get("counts")
            if isinstance(counts, tuple):
                joiner = " e " if lang == "it" else " and "
                params["counts"] = joiner.join(str(c) for c in counts)
        text = format_message(SHEET_MESSAGES, self.code, lang, params)
        return text[:1].upper() + text[1:]

    def as_dict(self, lang: str = "it") -> dict[str, object]:
        return {
            "code": self.code,
            "side": self.side,
            "category": self.category,
            "message": self.message(lang),
            "messages": {code: self.message(code) for code in ("it", "en")},
        }


def _side_name(side: int, lang: str, side_names: Sequence[str] | None) -> str:
    if side_names is not None and side < len(side_names):
        return side_names[side]
    return f"side {side + 1}" if lang == "en" else f"squadra {side + 1}"


# --------------------------------------------------------------------------- the referee


@dataclass(frozen=True, slots=True)
class DealSheet:
    """One hand-entered deal: each side's points by category (side 0 = home).

    `penalty` marks the deal a timeout or abandon interrupted (points after the penalty);
    `offender` is the side that timed out or abandoned, when known.
    """

    breakdown: tuple[Mapping[str, int], ...]
    penalty: bool = False
    offender: int | None = None


@dataclass(frozen=True, slots=True)
class _Implication:
    category: str
    at_least: int
    implied: str
    implied_text: Label
    option: str | None = None


# Points that bring others with them in a finished deal (cards held decide both):
_IMPLICATIONS: Mapping[str, tuple[_Implication, ...]] = {
    # napola to the n-th denaro: holds denari 1..n; 6 denari are the most, 7D is the settebello
    "classic": (
        _Implication("napola", 6, "denari", Label("dei denari", "denari")),
        _Implication("napola", 7, "settebello", Label("del settebello", "settebello")),
        _Implication("napola", 10, "rebello", Label("del rebello", "rebello"), "rebello"),
    ),
    # all ten denari (2) and all four sevens (2) both hold the seven of denari
    "fifteen": (
        _Implication("denari", 2, "settebello", Label("del settebello", "settebello")),
        _Implication("sette", 2, "settebello", Label("del settebello", "settebello")),
    ),
}


@dataclass(frozen=True, slots=True)
class _Limits:
    per_side: int
    one_side: bool
    total: int | None = None


def _category_limits(
    variant: Variant, key: str, sides: int, options: Mapping[str, object], penalty: bool
) -> _Limits:
    """How many points of a (non-scope) category a deal can give one side, and all sides."""
    category = next(c for c in variant.categories(options) if c.key == key)
    if key == "poche_carte":
        # 2 to each opponent of a side with fewer than 10 cards: with two sides only one can be
        # short once anybody captured, and with compulsory capture somebody always does. An
        # interrupted deal may give every "short" unit to the one opponent.
        if penalty:
            return _Limits(2 * sides, False, 2 * sides)
        forced = bool(options.get("forced_capture", variant.default_options["forced_capture"]))
        return _Limits(2 * (sides - 1), sides == 2 and forced)
    assert category.max_points is not None
    if penalty and category.max_points > 1:
        # an interrupted deal shares a many-point category out point by point
        return _Limits(category.max_points, False, category.max_points)
    return _Limits(category.max_points, category.one_side)


def check_deal(
    variant_key: str,
    options: Mapping[str, object] | None,
    seat_count: int,
    deal: DealSheet,
) -> list[SheetError]:
    """Every reason why `deal` cannot be a deal of `variant_key` with these options and seats
    (empty when it can)."""
    variant = get_variant(variant_key)
    values: dict[str, object] = dict(variant.default_options)
    values.update(options or {})
    sides = sides_for(seat_count)
    known = set(variant.category_keys(values))
    errors: list[SheetError] = []
    breakdown = deal.breakdown
    for side, row in enumerate(breakdown):
        for key in row:
            if key not in known:
                errors.append(SheetError("unknown_category", side, key, variant_key))
    if errors:
        return errors
    errors.extend(_check_scope(variant_key, seat_count, deal))
    for category in variant.categories(values):
        key = category.key
        if key == "scope":
            continue
        limits = _category_limits(variant, key, sides, values, deal.penalty)
        given = [row.get(key, 0) for row in breakdown]
        for side, points in enumerate(given):
            if points > limits.per_side:
                errors.append(
                    SheetError(
                        "too_many", side, key, params={"points": points, "max": limits.per_side}
                    )
                )
            elif points and not deal.penalty and not _possible(category, points):
                allowed = _values_text(category, limits.per_side)
                errors.append(
                    SheetError(
                        "impossible_value",
                        side,
                        key,
                        params={"points": points, "values": allowed},
                    )
                )
        if limits.one_side and sum(1 for points in given if points) > 1:
            errors.append(SheetError("both_sides", None, key))
        elif limits.total is not None and sum(given) > limits.total:
            errors.append(
                SheetError(
                    "too_many_total", None, key, params={"points": sum(given), "max": limits.total}
                )
            )
    if not deal.penalty and not errors:
        errors.extend(_check_implications(variant, values, breakdown))
    return errors


def _possible(category: Category, points: int) -> bool:
    if category.values is not None:
        return points in category.values
    return points % category.step == 0


def _possible_values(category: Category, most: int) -> list[int]:
    if category.values is not None:
        return sorted(category.values)
    return list(range(0, most + 1, category.step))


def _values_text(category: Category, most: int) -> str:
    return ", ".join(str(v) for v in _possible_values(category, most))


def _check_scope(variant_key: str, seat_count: int, deal: DealSheet) -> Iterator[SheetError]:
    bound = scope_bound(variant_key, seat_count)
    variant = get_variant(variant_key)
    why = _WHY_FIFTEEN if variant.fifteen else _WHY_PLAYS
    counts = [row.get("scope", 0) for row in deal.breakdown]
    if deal.penalty:
        # each opponent of the offender gets one more scopa; scope made before stay
        extra = [0 if side == deal.offender else 1 for side in range(len(counts))]
    else:
        extra = [0] * len(counts)
    over = False
    for side, points in enumerate(counts):
        most = bound.per_side + extra[side]
        if points > most:
            over = True
            yield SheetError(
                "scope_side",
                side,
                "scope",
                params={"points": points, "max": most, "why": why},
            )
    if over:
        return
    if deal.penalty:
        # the scope made before the interruption are those of a deal cut short
        made = tuple(max(0, points - more) for points, more in zip(counts, extra, strict=True))
        if not bound.allows(made):
            yield _combination(counts, why)
        return
    if not bound.allows(counts):
        yield _combination(counts, why)


def _combination(counts: Sequence[int], why: Label) -> SheetError:
    return SheetError(
        "scope_combination", None, "scope", params={"counts": tuple(counts), "why": why}
    )


def _check_implications(
    variant: Variant, options: Mapping[str, object], breakdown: Sequence[Mapping[str, int]]
) -> Iterator[SheetError]:
    rules = _IMPLICATIONS["fifteen" if variant.fifteen else "classic"]
    known = set(variant.category_keys(options))
    for side, row in enumerate(breakdown):
        for rule in rules:
            if rule.category not in known or rule.implied not in known:
                continue
            if rule.option is not None and not options.get(rule.option):
                continue
            points = row.get(rule.category, 0)
            if points >= rule.at_least and not row.get(rule.implied, 0):
                yield SheetError(
                    "implied",
                    side,
                    rule.category,
                    params={"points": points, "implied": rule.implied_text},
                )


# --------------------------------------------------------------------------- the referee as data


def _limits_data(limits: _Limits) -> dict[str, object]:
    return {"per_side": limits.per_side, "one_side": limits.one_side, "total": limits.total}


def referee_table(
    variant_key: str, options: Mapping[str, object] | None, seat_count: int
) -> dict[str, object]:
    """What `check_deal` knows about one variant, its options and seats, as plain JSON data.

    A port of the referee (the players' phone checks a sheet offline with
    `public/static/js/sheet-referee.js`) reads its figures here instead of copying them: the
    categories in the order the referee visits them with their limits (in a finished and in an
    interrupted deal) and possible values, the scope counts a deal can give, the points that
    bring others with them, and the sentences with their labels. `tests/engine/
    test_sheet_referee_js.py` holds the port to `check_deal` on generated sheets.
    """
    variant = get_variant(variant_key)
    values: dict[str, object] = dict(variant.default_options)
    values.update(options or {})
    sides = sides_for(seat_count)
    bound = scope_bound(variant_key, seat_count)
    known = variant.category_keys(values)
    categories: list[dict[str, object]] = []
    for category in variant.categories(values):
        if category.key == "scope":
            categories.append({"key": "scope"})
            continue
        finished = _category_limits(variant, category.key, sides, values, False)
        categories.append(
            {
                "key": category.key,
                "limits": _limits_data(finished),
                "penalty_limits": _limits_data(
                    _category_limits(variant, category.key, sides, values, True)
                ),
                "possible": _possible_values(category, finished.per_side),
            }
        )
    implications = [
        {
            "category": rule.category,
            "at_least": rule.at_least,
            "implied": rule.implied,
            "implied_text": rule.implied_text.as_dict(),
        }
        for rule in _IMPLICATIONS["fifteen" if variant.fifteen else "classic"]
        if rule.category in known
        and rule.implied in known
        and (rule.option is None or values.get(rule.option))
    ]
    why = _WHY_FIFTEEN if variant.fifteen else _WHY_PLAYS
    return {
        "variant": variant_key,
        "variant_name": variant.name.as_dict(),
        "sides": sides,
        "known": list(known),
        "categories": categories,
        "scope": {
            "counts": sorted(list(counts) for counts in bound.counts),
            "per_side": bound.per_side,
            "total": bound.total,
            "why": why.as_dict(),
        },
        "implications": implications,
        "labels": {key: label.as_dict() for key, label in CATEGORY_LABELS.items()},
        "messages": {code: {"it": it, "en": en} for code, (it, en) in SHEET_MESSAGES.items()},
    }
