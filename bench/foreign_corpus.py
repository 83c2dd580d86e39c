"""Match records of another origin: shuffled decks and a different play strategy, written by
rules implemented here (not by ``scopa.simulate``), so the verifier's speed is measured
on records it did not shape.

Classic 2-player scopa to 11: the deck is shuffled with ``random.Random(seed)``; each play
prefers the capture that takes the most cards (random among equals, and a random card 30 % of
the time), where the engine's simulator plays otherwise. Deals are added until the verifier
accepts the record as a finished match (only that stop uses the engine). Usage:

    .venv/bin/python bench/foreign_corpus.py --matches 300 > /tmp/foreign.jsonl
    .venv/bin/python bench/verify.py --corpus /tmp/foreign.jsonl
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SUITS = "DCBS"  # denari, coppe, bastoni, spade
DECK = [f"{rank}{suit}" for suit in SUITS for rank in range(1, 11)]


def rank(card: str) -> int:
    return int(card[:-1])


def captures(card: str, table: list[str]) -> list[tuple[str, ...]]:
    """Every legal take of ``card`` on ``table``: equal rank alone first, else any sum."""
    equal = [(c,) for c in table if rank(c) == rank(card)]
    if equal:
        return equal
    found = []
    # Ranks are 1..10, so no more than four cards add up to a rank (1 + 2 + 3 + 4).
    for size in range(2, min(len(table), 4) + 1):
        for combo in itertools.combinations(table, size):
            if sum(rank(c) for c in combo) == rank(card):
                found.append(combo)
    return found


def play_deal(rng: random.Random, dealer: int) -> dict:
    deck = DECK[:]
    rng.shuffle(deck)
    order = [(dealer + 1 + i) % 2 for i in range(2)]
    source = iter(deck)
    hands: list[list[str]] = [[], []]
    table: list[str] = []

    def deal_round(first: bool) -> None:
        for _ in range(3):
            for seat in order:
                hands[seat].append(next(source))
        if first:
            table.extend(next(source) for _ in range(4))

    deal_round(True)
    if sum(1 for c in table if rank(c) == 10) >= 3:
        return {"dealer": dealer, "deck": deck, "void": True}
    plays = []
    turn = 0
    while len(plays) < 36:
        if not hands[0] and not hands[1]:
            deal_round(False)
        seat = order[turn % 2]
        hand = hands[seat]
        options = [(card, take) for card in hand for take in captures(card, table) or [()]]
        if rng.random() < 0.3:
            card = rng.choice(hand)
            take = rng.choice(captures(card, table) or [()])
        else:
            best = max(len(take) for _, take in options)
            card, take = rng.choice([o for o in options if len(o[1]) == best])
        hand.remove(card)
        for c in take:
            table.remove(c)
        if not take:
            table.append(card)
        plays.append({"seat": seat, "card": card, "take": list(take)})
        turn += 1
    return {"dealer": dealer, "deck": deck, "plays": plays}


def record(seed: int, max_deals: int = 30) -> dict | None:
    """Deals until the verifier accepts the record as a finished match (only this stop uses
    the engine), or ``None``."""
    from scopa import verify_document

    rng = random.Random(seed)
    dealer = rng.randrange(2)
    doc = {
        "schema": "scopa-match/1",
        "variant": "scopa",
        "end": {"target": 11},
        "seats": [f"north{seed}", f"south{seed}"],
        "deals": [],
    }
    for _ in range(max_deals):
        deal = play_deal(rng, dealer)
        doc["deals"].append(deal)
        if not deal.get("void"):
            dealer = (dealer + 1) % 2
            if verify_document(doc).get("valid"):
                return doc
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    made = 0
    seed = args.seed
    while made < args.matches:
        doc = record(seed)
        seed += 1
        if doc is None:
            continue
        print(json.dumps(doc))
        made += 1


if __name__ == "__main__":
    main()
