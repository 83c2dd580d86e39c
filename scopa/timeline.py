"""Snapshots of a match after every play, for the browser replay viewer."""

from typing import Any

from .cards import CARD_CODES
from .record import MatchRecord, parse_record, sides_for
from .rules import check_take, rules_for
from .state import DealState


def replay_timeline(record: bytes | str | dict[str, Any] | MatchRecord) -> list[dict[str, Any]]:
    """JSON-able positions: one after each deal is dealt (play None), then one after each play.

    Stops at the first illegal play, which the verifier reports; accepts a parsed record or
    anything `parse_record` reads.
    """
    record = parse_record(record)
    rules = rules_for(record.variant, record.options)
    seat_count = len(record.seats)
    side_count = sides_for(seat_count)
    frames: list[dict[str, Any]] = []
    for d, deal in enumerate(record.deals):
        state = DealState(rules, seat_count, side_count, deal.dealer, deal.deck)
        frames.append(
            {
                "deal": d,
                "play": None,
                "dealer": deal.dealer,
                "void": state.void,
                "dealer_fifteen": state.dealer_fifteen,
                **state.snapshot(),
                "move": None,
            }
        )
        if state.void or deal.void:
            continue
        for p, play in enumerate(deal.plays):
            if state.finished or play.card not in state.hands[state.to_move]:
                return frames
            if check_take(rules, play.card, state.table, play.take) is not None:
                return frames
            seat = state.to_move
            scopa = state.apply(play.card, play.take)
            frames.append(
                {
                    "deal": d,
                    "play": p,
                    "dealer": deal.dealer,
                    "void": False,
                    "dealer_fifteen": state.dealer_fifteen,
                    **state.snapshot(),
                    "move": {
                        "seat": seat,
                        "side": seat % side_count,
                        "card": CARD_CODES[play.card],
                        "take": [CARD_CODES[c] for c in play.take],
                        "scopa": scopa,
                    },
                }
            )
    return frames


def position(record: bytes | str | dict[str, Any] | MatchRecord, deal: int, play: int) -> DealState:
    """The position before play `play` of deal `deal` (for `legal_moves` in a replay viewer).

    Replays the recorded plays as they are; call it on a verified record.
    """
    record = parse_record(record)
    rules = rules_for(record.variant, record.options)
    recorded = record.deals[deal]
    state = DealState(
        rules, len(record.seats), sides_for(len(record.seats)), recorded.dealer, recorded.deck
    )
    for made in recorded.plays[:play]:
        state.apply(made.card, made.take)
    return state
