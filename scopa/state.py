"""A deal in progress: dealing from the recorded deck order, hands, table, captures, turn order.

The verifier, the simulator and the replay timeline all drive this one class, so a position means
the same thing everywhere.
"""

from collections.abc import Sequence
from typing import Any

from .cards import BIT, CARD_CODES, RANK_OF
from .rules import Move, Rules, is_ace_sweep, legal_takes

PLAYS_PER_DEAL = 36  # every card but the 4 first table cards is played from a hand
KING = 10


class DealState:
    """Position inside one deal. Seat i plays for side i mod sides."""

    __slots__ = (
        "capture_count",
        "captured",
        "dealer",
        "dealer_fifteen",
        "deck",
        "deck_pos",
        "hands",
        "last_capture_at",
        "last_capturer",
        "played",
        "round_size",
        "rules",
        "scope",
        "seat_count",
        "side_count",
        "table",
        "to_move",
        "void",
    )

    def __init__(
        self, rules: Rules, seat_count: int, side_count: int, dealer: int, deck: Sequence[int]
    ) -> None:
        self.rules = rules
        self.seat_count = seat_count
        self.side_count = side_count
        self.dealer = dealer
        self.deck = deck
        self.hands: list[list[int]] = [[] for _ in range(seat_count)]
        self.captured = [0] * side_count
        self.scope = [0] * side_count
        self.capture_count = [0] * side_count
        self.last_capture_at: list[int | None] = [None] * side_count  # play index; -1: dealt
        self.last_capturer: int | None = None
        self.played = 0
        self.round_size = 3 * seat_count
        self.deck_pos = 0
        self.to_move = (dealer + 1) % seat_count
        self.dealer_fifteen = 0
        self._deal_round()
        self.table = list(deck[self.deck_pos : self.deck_pos + 4])
        self.deck_pos += 4
        kings = sum(1 for c in self.table if RANK_OF[c] == KING)
        self.void = rules.void_kings and kings >= 3
        if rules.dealer_fifteen and not self.void:
            total = sum(RANK_OF[c] for c in self.table)
            if total in (15, 30):
                side = dealer % side_count
                for c in self.table:
                    self.captured[side] |= BIT[c]
                self.table = []
                self.dealer_fifteen = total // 15
                self.scope[side] += self.dealer_fifteen
                self.capture_count[side] += 1
                self.last_capturer = side
                self.last_capture_at[side] = -1

    def _deal_round(self) -> None:
        """3 cards each, one at a time, from the seat after the dealer round to the dealer."""
        n = self.seat_count
        start = self.dealer + 1
        pos = self.deck_pos
        deck = self.deck
        hands = self.hands
        for i in range(self.round_size):
            hands[(start + i) % n].append(deck[pos + i])
        self.deck_pos = pos + self.round_size

    @property
    def table_kings(self) -> int:
        return sum(
            1
            for c in self.deck[3 * self.seat_count : 3 * self.seat_count + 4]
            if RANK_OF[c] == KING
        )

    @property
    def finished(self) -> bool:
        return self.played >= PLAYS_PER_DEAL

    def legal_moves(self) -> list[Move]:
        if self.finished or self.void:
            return []
        moves = []
        table = self.table
        for card in self.hands[self.to_move]:
            for take in legal_takes(self.rules, card, table):
                moves.append(Move(card, take))
        return moves

    def apply(self, card: int, take: tuple[int, ...]) -> bool:
        """Play a card already known to be legal; returns True when the play is a scopa."""
        seat = self.to_move
        self.hands[seat].remove(card)
        table = self.table
        scopa = False
        if take:
            side = seat % self.side_count
            sweep = (
                self.rules.aces_take_all
                and RANK_OF[card] == 1
                and is_ace_sweep(self.rules, card, table)
            )
            mask = BIT[card]
            for c in take:
                table.remove(c)
                mask |= BIT[c]
            self.captured[side] |= mask
            self.capture_count[side] += 1
            self.last_capturer = side
            self.last_capture_at[side] = self.played
            if not table and not sweep and self.played != PLAYS_PER_DEAL - 1:
                self.scope[side] += 1
                scopa = True
        else:
            table.append(card)
        self.played += 1
        self.to_move = (seat + 1) % self.seat_count
        if self.played % self.round_size == 0:
            if self.played < PLAYS_PER_DEAL:
                self._deal_round()
            else:
                self._finish()
        return scopa

    def _finish(self) -> None:
        """Cards left on the table go to the last capturer (never a scopa), or to nobody."""
        if self.table and self.last_capturer is not None:
            for c in self.table:
                self.captured[self.last_capturer] |= BIT[c]
            self.table = []

    def loose_mask(self) -> int:
        """Cards nobody has captured yet: hands, the rest of the deck, the table."""
        taken = 0
        for mask in self.captured:
            taken |= mask
        return ((1 << 40) - 1) & ~taken

    def snapshot(self) -> dict[str, Any]:
        """JSON-able view of the position, for the replay viewer."""
        from .cards import cards_of_mask

        return {
            "hands": [[CARD_CODES[c] for c in hand] for hand in self.hands],
            "table": [CARD_CODES[c] for c in self.table],
            "captured": [[CARD_CODES[c] for c in cards_of_mask(m)] for m in self.captured],
            "scope": list(self.scope),
            "to_move": None if self.finished else self.to_move,
            "deck_left": 40 - self.deck_pos,
        }
