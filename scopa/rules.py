"""The rules of a play: which cards a played card may take, and legal-move generation.

`legal_takes` enumerates every legal capture and is the reference (simulator, replay viewer,
referee messages). `check_take` answers the verifier's question for one recorded take without
enumerating; a property test keeps the two in agreement on random positions.
"""

from collections.abc import Sequence
from functools import lru_cache
from typing import Any, NamedTuple

from .cards import CARD_CODES, RANK_OF
from .record import Options
from .variants import get_variant


class Rules:
    """Variant preset plus resolved options, flattened into the flags the hot path reads."""

    __slots__ = (
        "aces_take_all",
        "all_sevens_points",
        "compare_present",
        "dealer_fifteen",
        "fifteen",
        "forced_capture",
        "napola",
        "options",
        "rebello",
        "variant",
        "void_kings",
    )

    def __init__(self, variant: str, options: Options):
        entry = get_variant(variant)
        self.variant = variant
        self.options = options
        self.fifteen = entry.fifteen
        self.aces_take_all = entry.aces_take_all
        self.dealer_fifteen = entry.dealer_fifteen
        # An option only counts where it applies to the variant (no three-kings rule, rebello or
        # napola in scopa-15; capture is always compulsory in the classic variants).
        self.void_kings = options.void_three_kings and entry.applies("void_three_kings")
        self.forced_capture = options.forced_capture if entry.applies("forced_capture") else True
        self.rebello = options.rebello and entry.applies("rebello")
        self.napola = options.napola and entry.applies("napola")
        self.compare_present = options.primiera_missing_suit == "compare_present"
        self.all_sevens_points = entry.all_sevens_points


@lru_cache(maxsize=64)
def rules_for(variant: str, options: Options) -> Rules:
    return Rules(variant, options)


class Move(NamedTuple):
    """A play: the card put on the table and the table cards it takes (empty tuple: laid down)."""

    card: int
    take: tuple[int, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"card": CARD_CODES[self.card], "take": [CARD_CODES[c] for c in self.take]}


def _reachable(table: Sequence[int], limit: int) -> int:
    """Bitset of the sums (up to `limit`) that non-empty subsets of the table can make."""
    reach = 1
    cap = (1 << (limit + 1)) - 1
    for card in table:
        reach |= (reach << RANK_OF[card]) & cap
    return reach >> 1 << 1


def can_sum(table: Sequence[int], target: int) -> bool:
    return target > 0 and bool(_reachable(table, target) >> target & 1)


def subsets_with_sum(table: Sequence[int], target: int) -> list[tuple[int, ...]]:
    """Every set of table cards whose ranks add up to `target` (table order kept)."""
    found: list[tuple[int, ...]] = []
    cards = list(table)

    def walk(start: int, remaining: int, chosen: list[int]) -> None:
        for i in range(start, len(cards)):
            rank = RANK_OF[cards[i]]
            if rank == remaining:
                found.append((*chosen, cards[i]))
            elif rank < remaining:
                chosen.append(cards[i])
                walk(i + 1, remaining - rank, chosen)
                chosen.pop()

    if target > 0:
        walk(0, target, [])
    return found


def legal_takes(rules: Rules, card: int, table: Sequence[int]) -> list[tuple[int, ...]]:
    """Every legal take for `card` on `table`; `()` in the list means laying it down is legal."""
    rank = RANK_OF[card]
    if rules.fifteen:
        takes = subsets_with_sum(table, 15 - rank)
        if not takes or not rules.forced_capture:
            takes.append(())
        return takes
    if rules.aces_take_all and rank == 1 and table and all(RANK_OF[c] != 1 for c in table):
        return [tuple(table)]
    equal: list[tuple[int, ...]] = [(c,) for c in table if RANK_OF[c] == rank]
    if equal:
        return equal
    return subsets_with_sum(table, rank) or [()]


def is_ace_sweep(rules: Rules, card: int, table: Sequence[int]) -> bool:
    """Scopa d'assi: an ace played on a table without aces takes all, and that is never a scopa."""
    return (
        rules.aces_take_all
        and RANK_OF[card] == 1
        and bool(table)
        and all(RANK_OF[c] != 1 for c in table)
    )


def check_take(
    rules: Rules, card: int, table: Sequence[int], take: tuple[int, ...]
) -> tuple[str, dict[str, Any]] | None:
    """None when taking `take` with `card` is legal, else (code, params) for the referee message."""
    rank = RANK_OF[card]
    if take and (len(take) != len(set(take)) or any(c not in table for c in take)):
        missing = [c for i, c in enumerate(take) if c not in table or c in take[:i]]
        return "take_not_on_table", {"taken_cards": list(take), "missing_cards": missing}
    if rules.fifteen:
        if take:
            total = rank
            for c in take:
                total += RANK_OF[c]
            if total != 15:
                return "wrong_fifteen", {"card": card, "taken_cards": list(take), "total": total}
            return None
        if rules.forced_capture and can_sum(table, 15 - rank):
            return "must_capture", {"card": card, "options": legal_takes(rules, card, table)}
        return None
    if rules.aces_take_all and rank == 1 and table:
        for c in table:
            if RANK_OF[c] == 1:
                break
        else:
            if len(take) != len(table):
                return "ace_must_take_all", {
                    "card": card,
                    "table_cards": list(table),
                    "taken_cards": list(take),
                }
            return None
    equal = [c for c in table if RANK_OF[c] == rank]
    if equal:
        if len(take) == 1 and RANK_OF[take[0]] == rank:
            return None
        if not take:
            return "must_capture", {"card": card, "options": [(c,) for c in equal]}
        return "must_take_equal_rank", {
            "card": card,
            "equal_choice": equal,
            "taken_cards": list(take),
        }
    if take:
        total = 0
        for c in take:
            total += RANK_OF[c]
        if total != rank:
            return "wrong_sum", {
                "card": card,
                "rank": rank,
                "taken_cards": list(take),
                "total": total,
            }
        return None
    if can_sum(table, rank):
        return "must_capture", {"card": card, "options": legal_takes(rules, card, table)}
    return None
