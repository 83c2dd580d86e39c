"""Boards for duplicate Scopa ("smazzate ripetute"): deals fixed in advance, played at every table.

A board is one deal: the 40 cards in the order they leave the deck and the dealer's seat. Every
table that holds a board plays exactly that deal, so a line is scored against the others who
held the same cards (the scoring lives in `tournaments/algorithms/duplicate.py`).

Why a hand-written shuffle: a board set must come out the same from its seed on any Python and
any machine for as long as a federation keeps its archive, and `random.shuffle` is not promised
to stay the same across Python versions. The deck here is a Fisher-Yates shuffle driven by
SHA-256 in counter mode over `scopa-board/1|seed|variant|seats|number|attempt|counter`, with
rejection sampling (no modulo bias); the whole recipe is in this module and in
docs/match-record.md ("Boards").

A board never triggers its variant's redeal rule (three or more kings among the four table
cards where the variant voids such a deal): such a deck is thrown away and the next attempt is
drawn, so every table can play the board as it is.

Dealer: board n is dealt by seat (n - 1) mod seats, as duplicate bridge rotates the dealer with
the board number, so a round's consecutive boards rotate the dealer exactly as the verifier
expects within one match.

Two portable forms: the printed sheet (`sheet_text`/`board_from_sheet`) a volunteer follows to
prepare a deck, with a short check (the four table cards, each seat's first hand), and the QR
payload (`qr_payload`/`board_from_qr`) in the QR code's alphanumeric alphabet. Both rebuild the
board exactly; a sheet whose check does not match its deck is refused.
"""

from __future__ import annotations

import hashlib
import logging
import re
import secrets
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .cards import CARD_CODES, CARD_INDEX, RANK_OF, card_name
from .errors import EngineError, PlayError
from .record import SEAT_COUNTS, VARIANTS, MatchRecord, Options
from .rules import rules_for
from .verdict import Verdict
from .verify import verify

logger = logging.getLogger(__name__)

BOARD_SCHEMA = "scopa-board/1"
KING = 10
MAX_ATTEMPTS = 1000  # a valid deck comes in a few attempts; this only stops a bug from looping
# 40 symbols from the QR alphanumeric set (digits, capitals and four signs), one per card; ':'
# separates the fields and is not among them.
QR_CARD_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ$%*+"
QR_PREFIX = "SB1"


class BoardError(EngineError):
    """A sheet or QR payload that does not describe a valid board; `message(lang)` says why."""

    MESSAGES = {
        "unreadable": ("scheda illeggibile: {detail}", "unreadable sheet: {detail}"),
        "check_table": (
            "il controllo non torna: in tavola dovrebbero andare {expected}, la scheda dice "
            "{written}",
            "the check does not match: the table cards should be {expected}, the sheet says "
            "{written}",
        ),
        "check_hand": (
            "il controllo non torna: la prima mano del posto {seat} dovrebbe essere {expected}, "
            "la scheda dice {written}",
            "the check does not match: seat {seat}'s first hand should be {expected}, the "
            "sheet says {written}",
        ),
        "redeal": (
            "la smazzata va ridistribuita (tre o più re in tavola): non è una smazzata preparata "
            "valida",
            "the deal must be dealt again (three or more kings on the table): not a valid board",
        ),
    }

    def __init__(self, code: str, **params: Any) -> None:
        self.code = code
        self.params = params
        super().__init__(self.message("en"))

    def message(self, lang: str = "it") -> str:
        it, en = self.MESSAGES[self.code]
        return (en if lang == "en" else it).format(**self.params)


@dataclass(frozen=True, slots=True)
class Board:
    """One prepared deal: `deck` is the 40 card indexes in the order they leave the deck."""

    number: int
    variant: str
    seat_count: int
    dealer: int
    deck: tuple[int, ...]

    @property
    def deck_codes(self) -> list[str]:
        return [CARD_CODES[c] for c in self.deck]

    @property
    def table_cards(self) -> tuple[int, ...]:
        """The four cards the dealer lays on the table after the first hands."""
        start = 3 * self.seat_count
        return self.deck[start : start + 4]

    def first_hands(self) -> dict[int, tuple[int, ...]]:
        """Each seat's first three cards (one at a time from the seat after the dealer)."""
        n = self.seat_count
        hands: dict[int, list[int]] = {seat: [] for seat in range(n)}
        for i in range(3 * n):
            hands[(self.dealer + 1 + i) % n].append(self.deck[i])
        return {seat: tuple(cards) for seat, cards in hands.items()}

    def as_dict(self) -> dict[str, Any]:
        """The board as plain data (the API, the export): card codes, like a record's deal."""
        return {
            "number": self.number,
            "variant": self.variant,
            "seats": self.seat_count,
            "dealer": self.dealer,
            "deck": self.deck_codes,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Board:
        """The inverse of `as_dict`; BoardError on anything that is not a board."""
        try:
            deck = tuple(CARD_INDEX[code] for code in data["deck"])
            board = cls(
                int(data["number"]),
                str(data["variant"]),
                int(data["seats"]),
                int(data["dealer"]),
                deck,
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise BoardError("unreadable", detail=f"{type(exc).__name__}: {exc}") from None
        _check_shape(board)
        return board


def _check_shape(board: Board) -> None:
    if board.variant not in VARIANTS:
        raise BoardError("unreadable", detail=f"unknown variant {board.variant!r}")
    if board.seat_count not in SEAT_COUNTS:
        raise BoardError("unreadable", detail=f"{board.seat_count} seats")
    if board.number < 1:
        raise BoardError("unreadable", detail=f"board number {board.number}")
    if not 0 <= board.dealer < board.seat_count:
        raise BoardError("unreadable", detail=f"dealer seat {board.dealer}")
    if sorted(board.deck) != list(range(40)):
        raise BoardError("unreadable", detail="the deck is not the 40 cards, each once")


def dealer_of(number: int, seat_count: int) -> int:
    """Board n is dealt by seat (n - 1) mod seats."""
    return (number - 1) % seat_count


def triggers_redeal(deck: Sequence[int], seat_count: int, void_kings: bool) -> bool:
    """Whether the deal would be void: the rule is on and the table shows three or more kings."""
    if not void_kings:
        return False
    start = 3 * seat_count
    return sum(1 for c in deck[start : start + 4] if RANK_OF[c] == KING) >= 3


def _words(material: bytes) -> Iterator[int]:
    """An endless stream of 32-bit words: SHA-256 of `material|counter`, counter from 0."""
    counter = 0
    while True:
        digest = hashlib.sha256(material + b"|" + str(counter).encode()).digest()
        for i in range(0, 32, 4):
            yield int.from_bytes(digest[i : i + 4], "big")
        counter += 1


def _below(words: Iterator[int], bound: int) -> int:
    """A uniform integer in [0, bound) by rejection (the top of the 32-bit range is dropped)."""
    limit = (1 << 32) - (1 << 32) % bound
    while True:
        word = next(words)
        if word < limit:
            return word % bound


def shuffled_deck(material: bytes) -> tuple[int, ...]:
    """The 40 cards in Fisher-Yates order driven by `material` (see the module docstring)."""
    words = _words(material)
    deck = list(range(40))
    for i in range(39, 0, -1):
        j = _below(words, i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return tuple(deck)


def _void_kings(variant: str, options: Options | Mapping[str, Any] | None) -> bool:
    if isinstance(options, Options):
        return rules_for(variant, options).void_kings
    resolved = Options.for_variant(variant, dict(options or {}))
    return rules_for(variant, resolved).void_kings


def make_board(
    seed: str,
    number: int,
    *,
    variant: str = "scopa",
    seat_count: int = 4,
    options: Options | Mapping[str, Any] | None = None,
) -> Board:
    """Board `number` (1-based) of the set drawn from `seed`; never a deck to deal again."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}")
    if seat_count not in SEAT_COUNTS:
        raise ValueError(f"seats must be one of {SEAT_COUNTS}")
    if number < 1:
        raise ValueError("boards are numbered from 1")
    void_kings = _void_kings(variant, options)
    for attempt in range(MAX_ATTEMPTS):
        material = f"{BOARD_SCHEMA}|{seed}|{variant}|{seat_count}|{number}|{attempt}".encode()
        deck = shuffled_deck(material)
        if not triggers_redeal(deck, seat_count, void_kings):
            return Board(number, variant, seat_count, dealer_of(number, seat_count), deck)
    raise RuntimeError("no playable deck found")  # pragma: no cover - probability ~0


def new_board_seed() -> str:
    """A fresh secret seed for a board set: 64 bits from the operating system's secure source,
    as 16 hex digits (nobody can guess the boards from the time or from an earlier set)."""
    return secrets.token_hex(8)


def board_set(
    seed: str,
    count: int,
    *,
    variant: str = "scopa",
    seat_count: int = 4,
    options: Options | Mapping[str, Any] | None = None,
) -> tuple[Board, ...]:
    """Boards 1..count of the set drawn from `seed`: the same seed gives the same boards."""
    if count < 1:
        raise ValueError("a board set has at least one board")
    return tuple(
        make_board(seed, number, variant=variant, seat_count=seat_count, options=options)
        for number in range(1, count + 1)
    )


# The printed sheet ------------------------------------------------------------------------

_SHEET_TITLE = "SMAZZATA PREPARATA"
_LINE_BOARD = re.compile(r"^SMAZZATA PREPARATA N\. (\d+)\s*$")
_LINE_FIELD = re.compile(r"^(variante|giocatori|mazziere: posto)\s+(\S+)")
_LINE_CARD = re.compile(r"^\s*(\d{1,2})\.\s+(\S+)")
_LINE_TABLE = re.compile(r"^controllo, in tavola:\s*(.*)$")
_LINE_HAND = re.compile(r"^controllo, prima mano del posto (\d+):\s*(.*)$")


def sheet_text(board: Board, lang: str = "it") -> str:
    """The sheet a volunteer follows to prepare the deck: the cards from the top of the deck
    (the first card dealt first), each with its name, the dealer's seat, then the check.

    The keys stay in Italian (the sheet is read back by `board_from_sheet`); `lang` names the
    cards on each line for the volunteer.
    """
    lines = [
        f"{_SHEET_TITLE} N. {board.number}",
        f"variante {board.variant}",
        f"giocatori {board.seat_count}",
        f"mazziere: posto {board.dealer}",
        "mazzo, dalla prima carta distribuita (in cima) all'ultima:",
    ]
    for position, card in enumerate(board.deck, start=1):
        lines.append(f"{position:2d}. {CARD_CODES[card]:<3}  {card_name(card, lang)}")
    lines.append("controllo, in tavola: " + " ".join(CARD_CODES[c] for c in board.table_cards))
    for seat, cards in board.first_hands().items():
        codes = " ".join(CARD_CODES[c] for c in cards)
        lines.append(f"controllo, prima mano del posto {seat}: {codes}")
    return "\n".join(lines) + "\n"


def _codes(text: str) -> tuple[int, ...]:
    try:
        return tuple(CARD_INDEX[code] for code in text.split())
    except KeyError as exc:
        raise BoardError("unreadable", detail=f"unknown card {exc.args[0]}") from None


def board_from_sheet(text: str) -> Board:
    """The board a sheet describes; BoardError when it is unreadable or its check disagrees."""
    number: int | None = None
    fields: dict[str, str] = {}
    cards: dict[int, int] = {}
    table_check: tuple[int, ...] | None = None
    hand_checks: dict[int, tuple[int, ...]] = {}
    for line in text.splitlines():
        if match := _LINE_BOARD.match(line):
            number = int(match.group(1))
        elif match := _LINE_FIELD.match(line):
            fields[match.group(1)] = match.group(2)
        elif match := _LINE_CARD.match(line):
            position, code = int(match.group(1)), match.group(2)
            if code not in CARD_INDEX:
                raise BoardError("unreadable", detail=f"position {position}: unknown card {code}")
            if position in cards:
                raise BoardError("unreadable", detail=f"position {position} written twice")
            cards[position] = CARD_INDEX[code]
        elif match := _LINE_TABLE.match(line):
            table_check = _codes(match.group(1))
        elif match := _LINE_HAND.match(line):
            hand_checks[int(match.group(1))] = _codes(match.group(2))
    missing = [key for key in ("variante", "giocatori", "mazziere: posto") if key not in fields]
    if number is None or missing:
        raise BoardError("unreadable", detail="missing " + ", ".join(missing or ["title"]))
    if sorted(cards) != list(range(1, 41)):
        raise BoardError("unreadable", detail="the deck must list positions 1 to 40")
    try:
        seat_count, dealer = int(fields["giocatori"]), int(fields["mazziere: posto"])
    except ValueError as exc:
        raise BoardError("unreadable", detail=str(exc)) from None
    deck = tuple(cards[position] for position in range(1, 41))
    board = Board(number, fields["variante"], seat_count, dealer, deck)
    _check_shape(board)
    if table_check is None or len(hand_checks) != seat_count:
        raise BoardError("unreadable", detail="the check lines are missing")
    if table_check != board.table_cards:
        raise BoardError(
            "check_table",
            expected=" ".join(CARD_CODES[c] for c in board.table_cards),
            written=" ".join(CARD_CODES[c] for c in table_check),
        )
    for seat, cards_dealt in board.first_hands().items():
        written = hand_checks.get(seat, ())
        if written != cards_dealt:
            raise BoardError(
                "check_hand",
                seat=seat,
                expected=" ".join(CARD_CODES[c] for c in cards_dealt),
                written=" ".join(CARD_CODES[c] for c in written),
            )
    return board


# The QR payload ---------------------------------------------------------------------------


def qr_payload(board: Board) -> str:
    """`SB1:VARIANT:SEATS:NUMBER:DEALER:<40 symbols>`, all in the QR alphanumeric alphabet."""
    deck = "".join(QR_CARD_ALPHABET[c] for c in board.deck)
    fields = (QR_PREFIX, board.variant.upper(), board.seat_count, board.number, board.dealer, deck)
    return ":".join(str(field) for field in fields)


def board_from_qr(payload: str) -> Board:
    """The inverse of `qr_payload`; BoardError on anything else."""
    parts = payload.strip().split(":")
    if len(parts) != 6 or parts[0] != QR_PREFIX:
        raise BoardError("unreadable", detail="not a board QR code")
    _, variant, seats, number, dealer, deck_text = parts
    if len(deck_text) != 40 or any(ch not in QR_CARD_ALPHABET for ch in deck_text):
        raise BoardError("unreadable", detail="the deck must be 40 card symbols")
    try:
        board = Board(
            int(number),
            variant.lower(),
            int(seats),
            int(dealer),
            tuple(QR_CARD_ALPHABET.index(ch) for ch in deck_text),
        )
    except ValueError as exc:
        raise BoardError("unreadable", detail=str(exc)) from None
    _check_shape(board)
    return board


# The referee: a record played on its boards ------------------------------------------------


def board_errors(record: MatchRecord, boards: Sequence[Board]) -> list[PlayError]:
    """Why `record` was not played on `boards` (in the order the table played them); [] if it
    was. The first difference only: a wrong deal makes everything after it meaningless."""
    if not boards:
        return []
    first = boards[0]
    if record.variant != first.variant or len(record.seats) != first.seat_count:
        return [
            PlayError(
                "board_game",
                0,
                None,
                expected=f"{first.variant}, {first.seat_count}",
                got=f"{record.variant}, {len(record.seats)}",
            )
        ]
    deals = record.deals
    wanted = len(boards)
    if record.end.deals != wanted:
        return [PlayError("board_end", 0, None, expected=wanted)]
    for d, (deal, board) in enumerate(zip(deals, boards, strict=False)):
        if deal.dealer != board.dealer:
            return [
                PlayError(
                    "board_dealer",
                    d,
                    None,
                    board=board.number,
                    expected=board.dealer,
                    got=deal.dealer,
                )
            ]
        if deal.deck != board.deck:
            position = next(
                i for i, (a, b) in enumerate(zip(deal.deck, board.deck, strict=True)) if a != b
            )
            return [
                PlayError(
                    "board_deck",
                    d,
                    None,
                    board=board.number,
                    position=position + 1,
                    got_cards=[deal.deck[position]],
                    expected_cards=[board.deck[position]],
                )
            ]
    if len(deals) > wanted:
        return [PlayError("board_extra_deal", wanted, None, count=wanted)]
    return []


def verify_on_boards(record: MatchRecord, boards: Sequence[Board], lang: str = "it") -> Verdict:
    """`verify`, and the record must deal exactly `boards`, one deal each, in order; a record
    that swapped a deal is refused with the referee's sentence before any play error."""
    verdict = verify(record, lang)
    problems = board_errors(record, boards)
    if problems:
        logger.info("record refused: not played on its boards (%s)", problems[0].code)
        verdict.valid = False
        verdict.errors = problems + verdict.errors
        verdict.winner = None
        verdict.margin = 0
        verdict.end.reason = None
        verdict.end.deal = None
    return verdict
