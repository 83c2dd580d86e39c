"""Building records by hand: a deck arranged so that the first round gives chosen cards."""

import copy
import json

from scopa import CARD_CODES, simulate_match

ALL = list(CARD_CODES)


def arrange_deck(seat_count: int, dealer: int, hands: dict, table: list, rest: list | None = None):
    """A 40-card deck whose first round deals `hands` {seat: [3 cards]} and `table` (4 cards)."""
    deck = [None] * 40
    for i in range(3 * seat_count):
        seat = (dealer + 1 + i) % seat_count
        if seat in hands:
            deck[i] = hands[seat][i // seat_count]
    deck[3 * seat_count : 3 * seat_count + 4] = table
    used = {c for c in deck if c}
    spare = [c for c in (rest or []) if c not in used]
    spare += [c for c in ALL if c not in used and c not in spare]
    return [c if c else spare.pop(0) for c in deck[: 3 * seat_count + 4]] + spare


def record(deals, *, variant="scopa", seats=2, end=None, options=None, outcome=None, **extra):
    doc = {
        "schema": "scopa-match/1",
        "variant": variant,
        "options": options or {},
        "end": end or {"target": 11},
        "seats": [f"s{i}" for i in range(seats)],
        "deals": deals,
        "outcome": outcome or {"kind": "completed"},
    }
    doc.update(extra)
    return doc


def first_deal_record(hands, table, plays, *, dealer=1, seats=2, variant="scopa", options=None):
    deck = arrange_deck(seats, dealer, hands, table)
    return record(
        [{"dealer": dealer, "deck": deck, "plays": plays}],
        variant=variant,
        seats=seats,
        options=options,
    )


def sim(**kwargs) -> dict:
    return simulate_match(**kwargs)


def clone(doc: dict) -> dict:
    return copy.deepcopy(doc)


def as_bytes(doc: dict) -> bytes:
    return json.dumps(doc).encode()
