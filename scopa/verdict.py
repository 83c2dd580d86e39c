"""The verifier's answer as types: why a match ended, each deal's entry, the penalty, the clock.

`Verdict.as_dict` is the JSON object `verify_document` returns and the CLI prints; it is stored with
each record and served by the API as docs/match-record.md describes it, so the field names and
their order here are that format. Optional keys a deal entry only sometimes carries are UNSET
(left out of the JSON) rather than False, as before these types existed.
"""

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal

import msgspec
from msgspec import UNSET, Struct, UnsetType

from .errors import PlayError
from .scoring import Breakdown

OutcomeKind = Literal["completed", "timeout", "abandon"]


class EndReason(StrEnum):
    """Why a match is over; the values are the strings verdicts have always stored."""

    TARGET = "target"  # one side leads alone with at least the target points
    DEALS = "deals"  # the fixed number of deals is played and one side leads
    DRAW = "draw"  # the deals are played, the top is shared, no knock-out
    TIME_LIMIT = "time_limit"  # time ran out and one side leads after that deal
    TIEBREAK = "tiebreak"  # a knock-out tie-break deal had a single winner
    TIEBREAK_LAST_CAPTURE = "tiebreak_last_capture"  # the tie-break deals stayed level
    NO_CAPTURE = "no_capture"  # scopa-15: a side captured nothing in a deal
    TIMEOUT = "timeout"  # a seat ran out of time (the outcome says which)
    ABANDON = "abandon"  # a seat left the match


class DealEntry(Struct, gc=False):
    """One deal of the verdict: points and breakdown per side."""

    points: list[int]
    breakdown: list[Breakdown]
    tiebreak: bool
    void: bool
    interrupted: bool | UnsetType = UNSET  # stopped by the timeout or abandon
    penalty_only: bool | UnsetType = UNSET  # no deal was played: holds only the penalty
    dealer_fifteen: int | UnsetType = UNSET  # scope the dealer made with the first table
    penalty: bool | UnsetType = UNSET  # the timeout/abandon penalty is added to this deal


class Mismatch(Struct, gc=False):
    """A deal whose declared points differ from the verified ones."""

    deal: int
    declared: list[int]
    verified: list[int]


class OutcomeSummary(Struct, gc=False):
    """The record's outcome as the verifier read it; `side` is the offender's side."""

    kind: OutcomeKind
    seat: int | None
    side: int | None
    time_up_in_deal: int | UnsetType = UNSET


class MatchEnd(Struct, gc=False):
    """Why and in which deal the match ended (both None when the record is illegal)."""

    reason: EndReason | None
    deal: int | None


class Penalty(Struct, gc=False):
    """What the offender's opponents received for a timeout or abandon."""

    deal: int | None  # the interrupted deal; None when no deal was in progress
    offender_side: int
    unsecured: list[str]  # categories the interrupted deal had not yet decided
    extra_scopa: int
    points: list[int]  # per side


class LateMove(Struct, gc=False):
    """The first play made after the line's BankTime or total time had run out."""

    deal: int
    play: int
    seat: int
    side: int
    kind: Literal["bank", "total"]


DeclaredTimeout = Literal["confirmed", "not_confirmed", "not_checkable", "preceded_by_undeclared"]


class ClockFindings(Struct, gc=False):
    """What the clock data shows; `checked` is False when some play has no usable time."""

    move_s: float
    bank_s: float
    total_s: float | None
    checked: bool
    timeouts: list[LateMove]
    declared_timeout: DeclaredTimeout | None
    bank_left_ms: list[float]
    used_ms: list[float]


@dataclass(slots=True)
class Verdict:
    """What the verifier answers about one record; `as_dict` is the CLI's JSON line."""

    valid: bool
    errors: list[PlayError]
    deals: list[DealEntry]
    totals: list[int]
    winner: int | None
    margin: int
    declared_mismatches: list[Mismatch]
    outcome: OutcomeSummary
    sides: int
    seats: list[str]
    end: MatchEnd
    penalty: Penalty | None
    clock: ClockFindings | None
    lang: str = "it"

    def as_dict(self, lang: str | None = None) -> dict[str, Any]:
        lang = lang or self.lang
        to_json = msgspec.to_builtins  # structs to dicts, UNSET left out, EndReason to str
        result: dict[str, Any] = {
            "valid": self.valid,
            "errors": [e.as_dict(lang) for e in self.errors],
            "deals": to_json(self.deals),
            "totals": self.totals,
            "winner": self.winner,
            "margin": self.margin,
            "declared_mismatches": to_json(self.declared_mismatches),
            "outcome": to_json(self.outcome),
            "sides": self.sides,
            "seats": self.seats,
            "end": to_json(self.end),
        }
        if self.penalty is not None:
            result["penalty"] = to_json(self.penalty)
        if self.clock is not None:
            result["clock"] = to_json(self.clock)
        return result
