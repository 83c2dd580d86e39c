"""The columns of a standings row, listed once: the export's JSON and CSV, the API and the pages
read their totals from here, in this order.

Each column is a total the standings algorithm computes for a line
(``algorithms.standings.StandingRow`` has one attribute per key); the tie-break values that
follow them on a page are the tournament's own choice (``TieBreak``) and are not columns here.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class StandingColumn:
    key: str
    label: Promise


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
)
KEYS: tuple[str, ...] = tuple(column.key for column in COLUMNS)


def totals_of(row: object) -> dict[str, int]:
    """``{key: value}`` of every column, in order, read from a standings row."""
    return {key: getattr(row, key) for key in KEYS}
