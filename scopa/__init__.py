"""Scopa rules engine and match-record verifier (pure Python, no Django).

Public API: parse_record, verify, verify_document, legal_moves, replay_timeline, simulate_match,
the rule data VARIANTS, DEFAULT_OPTIONS, DECK_STYLES, Options, the verdict types Verdict and
EndReason, and the duplicate boards (Board, board_set, verify_on_boards and their sheet and QR
forms). The package is typed (py.typed) and checked with `mypy --strict`. The verifier's hot
modules run compiled by mypyc when the install could build them (`native`).
"""

# First: `native` decides whether the modules below load compiled or from their .py source.
from . import native
from .boards import (
    Board,
    BoardError,
    board_from_qr,
    board_from_sheet,
    board_set,
    make_board,
    qr_payload,
    sheet_text,
    verify_on_boards,
)
from .cards import CARD_CODES, CARD_INDEX, DECK_STYLES, card_code, card_name
from .errors import EngineError, PlayError, RecordError
from .presets import PRESETS
from .record import (
    DEFAULT_OPTIONS,
    SCHEMA_ID,
    VARIANTS,
    MatchRecord,
    Options,
    parse_record,
    record_json_schema,
    sides_for,
)
from .rules import Move, Rules, legal_takes, rules_for
from .simulate import POLICIES, simulate_match
from .state import DealState
from .timeline import position, replay_timeline
from .verdict import EndReason, Verdict
from .verify import verify, verify_document


def legal_moves(state: DealState) -> list[Move]:
    """Every legal play (card and set of taken cards) for the seat to move in `state`."""
    return state.legal_moves()


__all__ = [
    "CARD_CODES",
    "CARD_INDEX",
    "DECK_STYLES",
    "DEFAULT_OPTIONS",
    "POLICIES",
    "PRESETS",
    "SCHEMA_ID",
    "VARIANTS",
    "Board",
    "BoardError",
    "DealState",
    "EndReason",
    "EngineError",
    "MatchRecord",
    "Move",
    "Options",
    "PlayError",
    "RecordError",
    "Rules",
    "Verdict",
    "board_from_qr",
    "board_from_sheet",
    "board_set",
    "card_code",
    "card_name",
    "legal_moves",
    "legal_takes",
    "make_board",
    "native",
    "parse_record",
    "position",
    "qr_payload",
    "record_json_schema",
    "replay_timeline",
    "rules_for",
    "sheet_text",
    "sides_for",
    "simulate_match",
    "verify",
    "verify_document",
    "verify_on_boards",
]
