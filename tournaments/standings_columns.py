"""The columns of a standings row, listed once: the export's JSON and CSV, the API and the pages
read their totals from here, in this order.

Each column is a total the standings algorithm computes for a line
(``algorithms.standings.StandingRow`` has one attribute per key); the tie-break values that
follow them on a page are the tournament's own choice (``TieBreak``) and are not columns here.
The last three are a duplicate stage's score against the field (``services.standings`` fills
them from ``services.duplicate.field_ranking``; empty in every other stage): the direction the
line is ranked in, its matchpoints (or differences from the average) summed, and its percentage
of the tops (matchpoints only). Scores against the field are fractions (Neuberg, averages): the
export, the API and the pages give them to two decimals.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class StandingColumn:
    key: str
    label: Promise
    kind: str = "int"  # "int", "text" or "decimal" (two places; None when empty)
    duplicate: bool = False  # a duplicate stage's column, empty elsewhere


COLUMNS: tuple[StandingColumn, ...] = (
    StandingColumn("played", _("Played")),
    StandingColumn("won", _("Won")),
    StandingColumn("drawn", _("Drawn")),
    StandingColumn("lost", _("Lost")),
    StandingColumn("vp", _("Victory points")),
    StandingColumn("mp", _("Match points (point difference)")),
    StandingColumn("points_scored", _("Points scored")),
    StandingColumn("points_conceded", _("Points conceded")),
    StandingColumn("penalty", _("VP taken off by penalties")),
    StandingColumn("direction", _("Direction ranked in"), "text", duplicate=True),
    StandingColumn("field_score", _("Score against the field"), "decimal", duplicate=True),
    StandingColumn("field_percentage", _("Percentage"), "decimal", duplicate=True),
)
KEYS: tuple[str, ...] = tuple(column.key for column in COLUMNS)


def plain(value: Any) -> Any:
    """A column's value as the export and the API give it: a fraction to two decimals."""
    if isinstance(value, Fraction):
        return round(float(value), 2)
    return value


def totals_of(row: object) -> dict[str, Any]:
    """``{key: value}`` of every column, in order, read from a standings row."""
    return {key: plain(getattr(row, key, None)) for key in KEYS}
