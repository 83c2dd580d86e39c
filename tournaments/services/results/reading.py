"""Reading a sheet: the deal and decision value types, and a sheet (the JSON a result version
keeps) read into them and written back.

Pure functions over plain data: nothing here touches the database. A sheet that does not read
raises :class:`~tournaments.exceptions.ResultError` with a message for the organizer.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from django.utils.translation import gettext as _

from scopa import match_end
from tournaments.exceptions import ResultError
from tournaments.models import (
    Outcome,
)

logger = logging.getLogger(__name__)

MAX_TIEBREAK_DEALS = match_end.TIEBREAK_DEALS
MAX_DEALS = 60
MAX_DEAL_POINTS = 99
"""No deal scores more (a few dozen scope at most): larger figures are typing errors, and would
overflow the stored points."""
# What a deal's number can be: only an import gives numbers itself, and it refuses what the
# deal rows kept before migration 0013 could not hold (a small integer), so a file is judged the
# same either side of it.
MAX_DEAL_NUMBER = 32767
_CATEGORY = re.compile(r"^[a-z][a-z0-9_]{0,29}$")
PLAYED_OUTCOMES = {Outcome.COMPLETED, Outcome.TIMEOUT, Outcome.ABANDON}
OFFENCE_OUTCOMES = {Outcome.TIMEOUT, Outcome.ABANDON, Outcome.FORFEIT}

Breakdown: TypeAlias = dict[str, int]
"""A line's points in one deal by category (``{"scope": 2, "settebello": 1}``)."""
Sheet: TypeAlias = dict[str, Any]
"""The JSON a result version keeps (``ResultVersion.sheet``), as :func:`sheet_of` writes it:
``deals``, ``outcome``, ``offender``, ``time_expired`` and ``result``. Read back from the
database, of any age, so its values are not trusted to a type: they are read by key."""


@dataclass
class Deal:
    """One deal as stored: points and breakdown for (home, away)."""

    number: int
    points: tuple[int, int]
    breakdown: tuple[Breakdown, Breakdown]
    is_tiebreak: bool = False
    is_penalty: bool = False
    last_capture: int | None = None


@dataclass
class Decision:
    """What a result amounts to: totals, winner side (``None`` for a draw), margin."""

    totals: tuple[int, int]
    winner_side: int | None
    margin: int
    outcome: str
    offender_side: int | None = None
    deals: list[Deal] = field(default_factory=list)


class _DealLabel:
    """The "Deal N" of a message, translated only when a message is given."""

    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index

    def __str__(self) -> str:
        return _("Deal %(n)d") % {"n": self.index + 1}


def _as_int(value: object, deal: _DealLabel, category: str | None = None) -> int:
    """An int from a JSON number or a digit string; anything else is refused, and so is a
    number no deal can score (it would overflow the stored points). The message names the
    deal's points or one of its categories, translated only when there is one to give (an
    import reads tens of thousands of figures)."""

    def what() -> str:
        if category is None:
            return _("%(deal)s: points") % {"deal": deal}
        return _("%(deal)s: %(category)s") % {"deal": deal, "category": category}

    number = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str) and value.strip().lstrip("-").isdecimal():
        try:
            number = int(value.strip())
        except ValueError:  # pragma: no cover - isdecimal() strings are int()-readable
            number = None
    if number is None:
        raise ResultError(_("%(what)s must be a whole number.") % {"what": what()})
    if number > MAX_DEAL_POINTS:
        raise ResultError(
            _("%(what)s: %(value)d is more than a deal can score (at most %(max)d).")
            % {"what": what(), "value": number, "max": MAX_DEAL_POINTS}
        )
    return number


def _parse_deal(index: int, raw: object) -> Deal:
    label = _DealLabel(index)
    if not isinstance(raw, dict):
        raise ResultError(_("%(deal)s: expected points and breakdown.") % {"deal": label})
    points = raw.get("points")
    if not isinstance(points, list | tuple) or len(points) != 2:
        raise ResultError(_("%(deal)s: give the points of both lines.") % {"deal": label})
    points = tuple(_as_int(p, label) for p in points)
    if min(points) < 0:
        raise ResultError(_("%(deal)s: points cannot be negative.") % {"deal": label})
    breakdown = raw.get("breakdown")
    if breakdown is None:
        breakdown = [{}, {}]
    if not isinstance(breakdown, list | tuple) or len(breakdown) != 2:
        raise ResultError(_("%(deal)s: give the breakdown of both lines.") % {"deal": label})
    clean = []
    for side, (side_points, side_breakdown) in enumerate(zip(points, breakdown, strict=True)):
        if not isinstance(side_breakdown, dict):
            raise ResultError(_("%(deal)s: the breakdown must list categories.") % {"deal": label})
        parsed = {}
        for category, value in side_breakdown.items():
            if not isinstance(category, str) or not _CATEGORY.match(category):
                raise ResultError(
                    _("%(deal)s: unknown category “%(category)s”.")
                    % {"deal": label, "category": category}
                )
            value = _as_int(value, label, category)
            if value < 0:
                raise ResultError(
                    _("%(deal)s: %(category)s cannot be negative.")
                    % {"deal": label, "category": category}
                )
            if value:
                parsed[category] = value
        if sum(parsed.values()) != side_points:
            raise ResultError(
                _(
                    "%(deal)s: the breakdown of the %(side)s line adds up to %(sum)d, "
                    "not to its %(points)d points."
                )
                % {
                    "deal": label,
                    "side": _("home") if side == 0 else _("away"),
                    "sum": sum(parsed.values()),
                    "points": side_points,
                }
            )
        clean.append(parsed)
    last_capture = raw.get("last_capture")
    if last_capture is not None and last_capture not in (0, 1):
        raise ResultError(_("%(deal)s: the last capture is made by side 0 or 1.") % {"deal": label})
    return Deal(
        number=index,
        points=points,
        breakdown=(clean[0], clean[1]),
        is_tiebreak=bool(raw.get("tiebreak", False)),
        is_penalty=bool(raw.get("penalty", False)),
        last_capture=last_capture,
    )


def parse_deals(deals: object) -> list[Deal]:
    """Check the shape of manually entered deals (points, breakdown sums)."""
    if not isinstance(deals, list | tuple):
        raise ResultError(_("Deals must be a list."))
    if len(deals) > MAX_DEALS:
        raise ResultError(_("Too many deals (at most %(n)d).") % {"n": MAX_DEALS})
    return [_parse_deal(index, raw) for index, raw in enumerate(deals)]


def sheet_of(decision: Decision, *, time_expired: bool = False) -> Sheet:
    """A decision as the JSON a version keeps: deals, outcome, offending side and result."""
    return {
        "deals": [
            {
                "number": deal.number,
                "points": list(deal.points),
                "breakdown": [dict(deal.breakdown[0]), dict(deal.breakdown[1])],
                "tiebreak": deal.is_tiebreak,
                "penalty": deal.is_penalty,
                "last_capture": deal.last_capture,
            }
            for deal in decision.deals
        ],
        "outcome": str(decision.outcome),
        "offender": decision.offender_side,
        "time_expired": bool(time_expired),
        "result": {
            "totals": list(decision.totals),
            "winner": decision.winner_side,
            "margin": decision.margin,
        },
    }


def decision_of(sheet: Sheet) -> Decision:
    """The decision a version's sheet records (decided when the version was made)."""
    result = sheet["result"]
    return Decision(
        totals=tuple(result["totals"]),
        winner_side=result["winner"],
        margin=result["margin"],
        outcome=sheet["outcome"],
        offender_side=sheet.get("offender"),
        deals=deals_of(sheet),
    )


def deals_of(sheet: Sheet | None) -> list[Deal]:
    """The deals a version's sheet records, in order (none for a deletion or a bye)."""
    if not sheet:
        return []
    return [
        Deal(
            number=raw.get("number", index),
            points=(raw["points"][0], raw["points"][1]),
            breakdown=(raw["breakdown"][0], raw["breakdown"][1]),
            is_tiebreak=raw.get("tiebreak", False),
            is_penalty=raw.get("penalty", False),
            last_capture=raw.get("last_capture"),
        )
        for index, raw in enumerate(sheet["deals"])
    ]


def same_result(a: Sheet | None, b: Sheet | None) -> bool:
    """Whether two sheets give the match the same result: outcome, totals, winner, deal points."""
    if a is None or b is None:
        return a is b

    def key(sheet: Sheet) -> tuple[object, ...]:
        return (
            sheet["outcome"],
            sheet.get("offender"),
            sheet["result"],
            [(d["points"], d.get("tiebreak", False)) for d in sheet["deals"]],
        )

    return key(a) == key(b)


def bye_sheet(*, won: bool) -> Sheet:
    """The sheet of a bye: no deals, no opponent, the line that sat out the winner when its
    stage scores a bye as a forfeit win; what it is worth is :func:`bye_score`, applied by the
    projection."""
    return {
        "deals": [],
        "outcome": str(Outcome.BYE),
        "offender": None,
        "time_expired": False,
        "result": {"totals": [0, 0], "winner": 0 if won else None, "margin": 0},
    }
