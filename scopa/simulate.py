"""Random legal match records from a seed, for tests, demo data, benchmarks and timeouts.

Deterministic for a given seed. Moves come from `DealState.legal_moves`, the function the
verifier's checks are tested against, so every record it writes must verify as legal.
"""

import random
from collections.abc import Sequence
from typing import Any

import msgspec
from msgspec import UNSET

from .cards import BIT, CARD_CODES, DENARI_MASK, RANK_OF, SETTEBELLO
from .record import (
    SCHEMA_ID,
    SEAT_COUNTS,
    VARIANTS,
    EndInput,
    Options,
    OptionsInput,
    sides_for,
)
from .rules import Move, rules_for
from .scoring import score_deal
from .state import PLAYS_PER_DEAL, DealState
from .verify import deal_tally, match_end_for

POLICIES = ("random", "greedy")
MAX_DEALS = 400  # a target match that never ends would be a bug; stop rather than loop
GAP_BETWEEN_DEALS_MS = 15_000


def _greedy_value(state: DealState, move: Move) -> float:
    """Immediate gain: sweeps first, then settebello, denari, sevens and card count."""
    card, take = move
    if not take:
        return -RANK_OF[card] / 100 - (2 if card == SETTEBELLO else 0)
    cards = (*take, card)
    value: float = len(cards)
    value += sum(2 for c in cards if BIT[c] & DENARI_MASK)
    value += sum(1.5 for c in cards if RANK_OF[c] == 7)
    value += 6 if SETTEBELLO in cards else 0
    if len(take) == len(state.table) and state.played != PLAYS_PER_DEAL - 1:
        value += 20
    return value


def _choose(rng: random.Random, policy: str, state: DealState, moves: list[Move]) -> Move:
    if policy == "greedy":
        best = max(_greedy_value(state, m) for m in moves)
        moves = [m for m in moves if _greedy_value(state, m) == best]
    return moves[rng.randrange(len(moves))]


def _default_end(variant: str) -> dict[str, Any]:
    return {"target": 21} if variant == "scopa-15" else {"target": 11}


def simulate_match(
    *,
    variant: str = "scopa",
    seats: int = 2,
    options: dict[str, Any] | None = None,
    end: dict[str, Any] | None = None,
    knockout: bool = False,
    seed: int | str | bytes = 0,
    policy: str = "random",
    outcome: dict[str, Any] | None = None,
    clock: dict[str, Any] | None = None,
    declared: bool = True,
    decks: Sequence[tuple[int, Sequence[int]]] | None = None,
) -> dict[str, Any]:
    """A legal `scopa-match/1` record as a JSON-able dict, with the true `declared` scores.

    `outcome={"kind": "timeout"|"abandon", "seat": k, "deal": i, "play": p}` stops the match at
    deal i (or the last deal, if the match ends sooner) after p plays; a timeout is moved to the
    nearest play where seat k is to move. `clock={"move_s", "bank_s", "total_s"}` adds server
    times; `end={"target": 21, "time_limit_s": 3600}` records the deal in which time ran out.
    `declared=False` leaves out the declared scores. `decks`: the deals fixed in advance, one
    (dealer, deck) each (a duplicate round's boards); the match then ends by their number.
    """
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}")
    if seats not in SEAT_COUNTS:
        raise ValueError(f"seats must be one of {SEAT_COUNTS}")
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}")
    try:
        msgspec.convert(options or {}, OptionsInput, strict=True)
    except msgspec.ValidationError as exc:
        raise ValueError(f"bad options: {exc}") from None
    if decks is not None:
        end = {"deals": len(decks)}
    end = dict(end or _default_end(variant))
    result = _simulate(
        variant, seats, options, end, knockout, seed, policy, outcome, clock, None, decks
    )
    if outcome and result.pop("_ended_before_outcome", False):
        stop_deal = len(result["deals"]) - 1
        result = _simulate(
            variant, seats, options, end, knockout, seed, policy, outcome, clock, stop_deal, decks
        )
    result.pop("_ended_before_outcome", None)
    if not declared:
        for deal in result["deals"]:
            deal.pop("declared", None)
    return result


def _simulate(
    variant: str,
    seat_count: int,
    options: dict[str, Any] | None,
    end: dict[str, Any],
    knockout: bool,
    seed: int | str | bytes,
    policy: str,
    outcome: dict[str, Any] | None,
    clock: dict[str, Any] | None,
    stop_deal: int | None,
    decks: Sequence[tuple[int, Sequence[int]]] | None = None,
) -> dict[str, Any]:
    rng = random.Random(seed)
    resolved = Options.for_variant(variant, options or {})
    rules = rules_for(variant, resolved)
    side_count = sides_for(seat_count)
    end_struct = EndInput(target=end.get("target", UNSET), deals=end.get("deals", UNSET))
    time_limit_ms = end["time_limit_s"] * 1000 if "time_limit_s" in end else None
    progress = match_end_for(end_struct, UNSET, knockout, side_count, rules.fifteen)
    if outcome:
        wanted_deal = outcome.get("deal", 0) if stop_deal is None else stop_deal
        wanted_play = max(0, min(PLAYS_PER_DEAL - 1, outcome.get("play", 0)))
    move_ms = clock["move_s"] * 1000 if clock else 20_000
    now_ms = 0
    dealer = rng.randrange(seat_count)
    deals: list[dict[str, Any]] = []
    interrupted: tuple[int, DealState, int, list[dict[str, Any]]] | None = None
    time_up_in_deal: int | None = None
    while not progress.over and len(deals) < MAX_DEALS:
        d = len(deals)
        if decks is not None:
            dealer, fixed = decks[d]
            deck = list(fixed)
        else:
            deck = list(range(40))
            rng.shuffle(deck)
        state = DealState(rules, seat_count, side_count, dealer, deck)
        deal = {"dealer": dealer, "deck": [CARD_CODES[c] for c in deck]}
        if clock:
            now_ms += GAP_BETWEEN_DEALS_MS
            deal["start_ms"] = now_ms
        deal_start_ms = now_ms
        if state.void:
            deal["void"] = True
            deals.append(deal)
            continue
        stop_at = None
        if outcome and d >= wanted_deal:
            stop_at = wanted_play
            if outcome["kind"] == "timeout" and "seat" in outcome:
                seat = outcome["seat"] % seat_count
                for i in [*range(wanted_play, PLAYS_PER_DEAL), *range(wanted_play - 1, -1, -1)]:
                    if (dealer + 1 + i) % seat_count == seat:
                        stop_at = i
                        break
        plays = []
        while not state.finished and state.played != stop_at:
            move = _choose(rng, policy, state, state.legal_moves())
            play = {"seat": state.to_move, "card": CARD_CODES[move.card]}
            play["take"] = [CARD_CODES[c] for c in move.take]
            now_ms += rng.randint(300, max(300, int(move_ms * 0.8)))
            if clock:
                play["t_ms"] = now_ms
            plays.append(play)
            state.apply(move.card, move.take)
        deal["plays"] = plays
        deals.append(deal)
        if time_limit_ms is not None and time_up_in_deal is None and now_ms >= time_limit_ms:
            time_up_in_deal = d
            progress.time_up = d
        if stop_at is not None and not state.finished:
            interrupted = (d, state, deal_start_ms, plays)
            break
        points, _ = score_deal(rules, state.captured, state.scope)
        deal["declared"] = points
        for s in range(side_count):
            progress.totals[s] += points[s]
        progress.after_deal(d, deal_tally(state, points))
        dealer = (dealer + 1) % seat_count
    record: dict[str, Any] = {
        "schema": SCHEMA_ID,
        "variant": variant,
        "options": resolved.as_dict(),
        "end": end,
        "knockout": knockout,
        "seats": [f"player{i + 1}" for i in range(seat_count)],
        "deals": deals,
        "outcome": {"kind": "completed"},
    }
    if clock:
        record["clock"] = dict(clock)
    if time_up_in_deal is not None:
        record["outcome"]["time_up_in_deal"] = time_up_in_deal
    if outcome:
        if interrupted is None:
            record["_ended_before_outcome"] = stop_deal is None
            if stop_deal is not None:
                # the stop was put on the last deal but it finished first: offend after it
                record["outcome"] = {"kind": outcome["kind"], "seat": outcome.get("seat", 0)}
            return record
        d, state, _, plays = interrupted
        seat = state.to_move if outcome["kind"] == "timeout" else outcome.get("seat", 0)
        record["outcome"] = {"kind": outcome["kind"], "seat": seat % seat_count}
        if clock and outcome["kind"] == "timeout":
            record["outcome"]["t_ms"] = (
                now_ms + int(move_ms) + int(clock.get("bank_s", 0) * 1000) + 1000
            )
    return record
