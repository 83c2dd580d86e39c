"""The `scopa-match/1` record: msgspec types, parsing and the checks that make a record readable.

msgspec decodes JSON bytes straight into typed structs (about 4x faster than a strict pydantic
v2 model of the same shape, see docs/performance.md); the second pass below turns card codes into
ints and checks what a type cannot say (40 distinct cards, seats in range). Everything a user can
send ends in RecordError.
"""

import json
import logging
import re
from functools import lru_cache
from operator import attrgetter
from typing import TYPE_CHECKING, Annotated, Any, Literal

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType

from .cards import CARD_CODES, CARD_INDEX
from .errors import RecordError
from .presets import PRESETS

logger = logging.getLogger(__name__)

SCHEMA_ID = "scopa-match/1"
VARIANTS: tuple[str, ...] = tuple(PRESETS["variants"])
DEFAULT_OPTIONS: dict[str, dict[str, Any]] = PRESETS["default_options"]
SEAT_COUNTS = (2, 3, 4, 6)

NonNegInt = Annotated[int, Meta(ge=0)]
PositiveInt = Annotated[int, Meta(ge=1)]
NonNegNumber = Annotated[float, Meta(ge=0)]
if TYPE_CHECKING:  # built from data at run time, which a type checker cannot follow
    CardCode = str
    DeckStyle = str
else:
    # The 40 card codes as a Literal: msgspec checks them in C while decoding, and the JSON
    # Schema lists them.
    CardCode = Literal.__getitem__(CARD_CODES)
    DeckStyle = Literal.__getitem__(tuple(PRESETS["deck_styles"]))


class OptionsInput(Struct, forbid_unknown_fields=True, omit_defaults=True, gc=False):
    """Options as written in a record: every name optional, unknown names rejected."""

    rebello: bool | UnsetType = UNSET
    napola: bool | UnsetType = UNSET
    primiera_missing_suit: Literal["loses", "compare_present"] | UnsetType = UNSET
    void_three_kings: bool | UnsetType = UNSET
    forced_capture: bool | UnsetType = UNSET
    carte_viste: bool | UnsetType = UNSET
    carte_scoperte: bool | UnsetType = UNSET
    deck_style: DeckStyle | UnsetType = UNSET


class Options(Struct, frozen=True, kw_only=True):
    """Options with every default filled in from the variant's preset."""

    rebello: bool = False
    napola: bool = False
    primiera_missing_suit: Literal["loses", "compare_present"] = "loses"
    void_three_kings: bool = True
    forced_capture: bool = True
    carte_viste: bool = False
    carte_scoperte: bool = False
    deck_style: DeckStyle = "napoletane"

    @classmethod
    def for_variant(
        cls, variant: str, given: "OptionsInput | dict[str, Any] | None" = None
    ) -> "Options":
        values = dict(DEFAULT_OPTIONS[variant])
        if isinstance(given, OptionsInput):
            values.update(
                {k: v for k, v in msgspec.structs.asdict(given).items() if v is not UNSET}
            )
        elif given:
            values.update(given)
        return cls(**values)

    def as_dict(self) -> dict[str, Any]:
        return msgspec.structs.asdict(self)


_OPTION_NAMES = OptionsInput.__struct_fields__


@lru_cache(maxsize=256)
def _resolved_options(variant: str, given: tuple[Any, ...]) -> Options:
    values = dict(DEFAULT_OPTIONS[variant])
    values.update({k: v for k, v in zip(_OPTION_NAMES, given, strict=True) if v is not UNSET})
    return Options(**values)


class ClockInput(Struct, forbid_unknown_fields=True, omit_defaults=True, gc=False):
    """Chess-clock settings: seconds per move, BankTime per line for the whole match, total."""

    move_s: NonNegNumber
    bank_s: NonNegNumber = 0
    total_s: NonNegNumber | UnsetType = UNSET


class PlayInput(Struct, forbid_unknown_fields=True, omit_defaults=True, gc=False):
    """One play: the card put on the table and the table cards it takes ([] = laid down).
    `seat` is optional (turn order fixes it); `t_ms` is the server time of the play."""

    card: CardCode
    take: list[CardCode] = []
    seat: int | UnsetType = UNSET
    t_ms: NonNegInt | UnsetType = UNSET


class DealInput(Struct, forbid_unknown_fields=True, omit_defaults=True, gc=False):
    """One deal: dealer seat, the 40 cards in the order they leave the deck, the plays,
    optionally the declared points per side; `void` marks a deal dealt again (kings rule)."""

    dealer: int
    deck: list[CardCode]
    plays: list[PlayInput] = []
    declared: list[int] | UnsetType = UNSET
    void: bool = False
    start_ms: NonNegInt | UnsetType = UNSET


class EndInput(Struct, forbid_unknown_fields=True, omit_defaults=True, gc=False):
    """Exactly one of `target` (points) or `deals` (number of deals), optionally a time limit."""

    target: PositiveInt | UnsetType = UNSET
    deals: PositiveInt | UnsetType = UNSET
    time_limit_s: NonNegNumber | UnsetType = UNSET


class OutcomeInput(Struct, forbid_unknown_fields=True, omit_defaults=True, gc=False):
    """How the match ended: completed (with `time_up_in_deal` under a time limit), or a timeout
    or abandon by `seat` (`t_ms`: when the server declared the timeout)."""

    kind: Literal["completed", "timeout", "abandon"]
    seat: int | UnsetType = UNSET
    time_up_in_deal: NonNegInt | UnsetType = UNSET
    t_ms: NonNegInt | UnsetType = UNSET


class RecordInput(Struct, forbid_unknown_fields=True, omit_defaults=True, gc=False):
    """The whole document, exactly as `docs/record-schema.json` publishes it."""

    schema: Literal["scopa-match/1"]
    variant: Literal["scopa", "scopa-d-assi", "scopa-15"]
    end: EndInput
    seats: list[str]
    deals: list[DealInput]
    options: OptionsInput = msgspec.field(default_factory=OptionsInput)
    knockout: bool = False
    outcome: OutcomeInput = msgspec.field(default_factory=lambda: OutcomeInput(kind="completed"))
    clock: ClockInput | UnsetType = UNSET


class Play(Struct, gc=False):
    """One play with cards as ints; `seat` is None when the record leaves it to turn order."""

    card: int
    take: tuple[int, ...]
    seat: int | None
    t_ms: int | None


class Deal:
    """One recorded deal, deck as card ints. `raw_plays` are the decoded inputs (card codes), which
    the verifier's hot loop reads directly; `plays` converts them to `Play` on first use."""

    __slots__ = ("_plays", "dealer", "deck", "declared", "raw_plays", "start_ms", "void")

    def __init__(
        self,
        dealer: int,
        deck: tuple[int, ...],
        raw_plays: list[PlayInput],
        declared: list[int] | None,
        void: bool,
        start_ms: int | None,
    ) -> None:
        self.dealer = dealer
        self.deck = deck
        self.raw_plays = raw_plays
        self.declared = declared
        self.void = void
        self.start_ms = start_ms
        self._plays: list[Play] | None = None

    @property
    def plays(self) -> list[Play]:
        if self._plays is None:
            index = CARD_INDEX
            self._plays = [
                Play(
                    index[play.card],
                    tuple([index[code] for code in play.take]),
                    None if play.seat is UNSET else play.seat,
                    None if play.t_ms is UNSET else play.t_ms,
                )
                for play in self.raw_plays
            ]
        return self._plays


class MatchRecord(Struct):
    """A readable record, cards as ints, options resolved; `raw` keeps the decoded input."""

    variant: str
    options: Options
    end: EndInput
    knockout: bool
    seats: list[str]
    deals: list[Deal]
    outcome: OutcomeInput
    clock: ClockInput | None
    raw: RecordInput

    @property
    def sides(self) -> int:
        return sides_for(len(self.seats))


def sides_for(seat_count: int) -> int:
    """4 seats make 2 pairs, 6 seats 2 trios; 2 and 3 seats play one side each."""
    return 2 if seat_count in (2, 4, 6) else seat_count


_DECODER = msgspec.json.Decoder(RecordInput)
_SEAT_OF = attrgetter("seat")
_AT_PATH = re.compile(r"^(?P<text>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.S)
_CARD_PATH = re.compile(r"(\.deck\[\d+\]|\.card|\.take\[\d+\])$")
_FIELD_IN_TEXT = re.compile(r"field `(?P<name>[^`]*)`")


def _clean_path(path: str) -> str:
    return path[1:] if path.startswith(".") else path


def _record_error_from_validation(exc: msgspec.ValidationError) -> RecordError:
    match = _AT_PATH.match(str(exc))
    text = match.group("text") if match else str(exc)
    path = _clean_path(match.group("path") or "") if match else ""
    named = _FIELD_IN_TEXT.search(text)
    name = named.group("name") if named else "?"  # a reworded msgspec message must not crash
    in_options = path == "options" or path.startswith("options.")
    if text.startswith("Object missing required field"):
        field = f"{path}.{name}" if path else name
        return RecordError("missing_field", field, detail=text)
    if text.startswith("Object contains unknown field"):
        field = f"{path}.{name}" if path else name
        return RecordError("unknown_option" if in_options else "unknown_field", field, detail=text)
    value = text.split("Invalid enum value ", 1)[1] if "Invalid enum value" in text else ""
    if path == "schema":
        return RecordError("unknown_schema", path, value=value or "?", detail=text)
    if path == "variant":
        return RecordError("unknown_variant", path, value=value or "?", detail=text)
    if in_options:
        return RecordError("option_type", path, detail=text)
    if value and _CARD_PATH.search(path):
        return RecordError("unknown_card", path, value=value)
    if text.startswith("Expected `") and "`, got `" in text:
        return RecordError("wrong_type", path, detail=text)
    return RecordError("invalid_value", path, detail=text)


def _decode(data: object) -> RecordInput:
    try:
        if isinstance(data, dict):
            return msgspec.convert(data, RecordInput, strict=True)
        if isinstance(data, str):
            data = data.encode("utf-8")
        if not isinstance(data, bytes | bytearray | memoryview):
            raise RecordError("wrong_type", "$", detail=f"cannot read a {type(data).__name__}")
        return _DECODER.decode(data)
    except RecordError:
        raise
    except msgspec.ValidationError as exc:
        raise _record_error_from_validation(exc) from None
    except (msgspec.DecodeError, UnicodeError) as exc:
        raise RecordError("invalid_json", "$", detail=str(exc)[:200]) from None
    except Exception as exc:  # whatever a user sends, only RecordError comes out
        raise RecordError("unreadable", "$", detail=f"{type(exc).__name__}: {exc}"[:200]) from None


def _card(code: str, field: str) -> int:
    card = CARD_INDEX.get(code)
    if card is None:
        raise RecordError("unknown_card", field, value=json.dumps(code)[:40])
    return card


def _seat(value: int, seat_count: int, field: str) -> int:
    if not 0 <= value < seat_count:
        raise RecordError("seat_out_of_range", field, value=value, max=seat_count - 1)
    return value


def _build(raw: RecordInput) -> MatchRecord:
    seat_count = len(raw.seats)
    if seat_count not in SEAT_COUNTS:
        raise RecordError("seat_count", "seats", count=seat_count)
    sides = sides_for(seat_count)
    end = raw.end
    if (end.target is UNSET) == (end.deals is UNSET):
        raise RecordError(
            "invalid_value", "end", detail="exactly one of target or deals is required"
        )
    outcome = raw.outcome
    if outcome.kind in ("timeout", "abandon"):
        if outcome.seat is UNSET:
            raise RecordError(
                "missing_field", "outcome.seat", detail="timeout/abandon needs a seat"
            )
        _seat(outcome.seat, seat_count, "outcome.seat")
        if outcome.time_up_in_deal is not UNSET:
            raise RecordError(
                "invalid_value", "outcome.time_up_in_deal", detail="only for completed"
            )
    elif outcome.seat is not UNSET:
        raise RecordError(
            "invalid_value", "outcome.seat", detail="a completed match has no offender"
        )
    if outcome.time_up_in_deal is not UNSET and end.time_limit_s is UNSET:
        raise RecordError(
            "invalid_value", "outcome.time_up_in_deal", detail="end has no time_limit_s"
        )
    card_index = CARD_INDEX
    deals = []
    for d, deal in enumerate(raw.deals):  # the per-deal path: field paths are built on errors only
        dealer = deal.dealer
        if not 0 <= dealer < seat_count:
            _seat(dealer, seat_count, f"deals[{d}].dealer")
        deck_codes = deal.deck
        if len(deck_codes) != 40:
            raise RecordError("deck_size", f"deals[{d}].deck", count=len(deck_codes))
        try:
            deck = tuple(map(card_index.__getitem__, deck_codes))
        except KeyError:  # only when a dict bypassed msgspec's card check
            deck = tuple(_card(code, f"deals[{d}].deck[{i}]") for i, code in enumerate(deck_codes))
        if len(set(deck)) != 40:
            seen = set()
            for i, card in enumerate(deck):
                if card in seen:
                    raise RecordError(
                        "duplicate_card", f"deals[{d}].deck[{i}]", value=deck_codes[i]
                    )
                seen.add(card)
        plays = deal.plays
        seats_named = set(map(_SEAT_OF, plays))
        seats_named.discard(UNSET)
        if seats_named and (min(seats_named) < 0 or max(seats_named) >= seat_count):
            for p, play in enumerate(plays):
                if play.seat is not UNSET:
                    _seat(play.seat, seat_count, f"deals[{d}].plays[{p}].seat")
        declared = None
        if deal.declared is not UNSET:
            declared = deal.declared
            if len(declared) != sides:
                raise RecordError(
                    "declared_length", f"deals[{d}].declared", count=len(declared), sides=sides
                )
        start_ms = None if deal.start_ms is UNSET else deal.start_ms
        deals.append(Deal(dealer, deck, plays, declared, deal.void, start_ms))
    return MatchRecord(
        variant=raw.variant,
        options=_resolved_options(raw.variant, msgspec.structs.astuple(raw.options)),
        end=end,
        knockout=raw.knockout,
        seats=raw.seats,
        deals=deals,
        outcome=outcome,
        clock=None if raw.clock is UNSET else raw.clock,
        raw=raw,
    )


def parse_record(data: "bytes | str | dict[str, Any] | MatchRecord") -> MatchRecord:
    """Read a `scopa-match/1` record; whatever comes in, only RecordError can come out."""
    if isinstance(data, MatchRecord):
        return data
    raw = _decode(data)
    try:
        return _build(raw)
    except RecordError:
        raise
    except Exception as exc:  # a bug here must still look like an unreadable record to a user
        logger.exception("unexpected error while reading a record")
        raise RecordError("unreadable", "$", detail=f"{type(exc).__name__}") from None


def record_json_schema() -> dict[str, Any]:
    """The JSON Schema published as docs/record-schema.json, generated from the msgspec types."""
    schema: dict[str, Any] = msgspec.json.schema(RecordInput)
    schema["$id"] = "https://scopa-tornei.example/schemas/scopa-match-1.json"
    schema["title"] = "scopa-match/1"
    return schema
