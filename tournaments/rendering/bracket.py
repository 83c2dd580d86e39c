"""A knock-out bracket as one server-side SVG, readable without JavaScript.

Input is plain data (no ORM): one list of ``BracketMatch`` per round, in bracket order, the first
round first; match ``i`` of round ``r`` feeds match ``i // 2`` of round ``r + 1``. A third-place
match, if any, is drawn under the final.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from html import escape

logger = logging.getLogger(__name__)

BOX_W = 190
BOX_H = 46
GAP_X = 40
SLOT_H = 64
TOP = 34
PAD = 8


@dataclass(frozen=True)
class BracketMatch:
    """One match box. ``winner`` is ``"home"``, ``"away"`` or ``None`` (not played yet)."""

    home: str | None
    away: str | None
    home_score: str = ""
    away_score: str = ""
    winner: str | None = None
    tiebreak: bool = False
    note: str = ""
    href: str = ""
    label: str = ""


def _text(x: float, y: float, content: str, **attrs: str) -> str:
    extra = "".join(f' {k.replace("_", "-")}="{escape(v)}"' for k, v in attrs.items())
    return f'<text x="{x:.0f}" y="{y:.0f}"{extra}>{escape(content)}</text>'


def _clip(name: str, limit: int = 22) -> str:
    return name if len(name) <= limit else name[: limit - 1] + "…"


def _box(x: float, y: float, match: BracketMatch, labels: dict[str, str]) -> str:
    parts = []
    tb_mark = f" {labels['tiebreak_mark']}" if match.tiebreak else ""
    desc = f"{match.home or labels['tbd']} – {match.away or labels['tbd']}"
    if match.home_score or match.away_score:
        desc += f" {match.home_score}–{match.away_score}"
    if match.tiebreak:
        desc += f" ({labels['tiebreak']})"
    parts.append(f'<g class="bm" role="listitem" aria-label="{escape(desc)}">')
    if match.href:
        parts.append(f'<a href="{escape(match.href)}">')
    parts.append(
        f'<rect x="{x}" y="{y}" width="{BOX_W}" height="{BOX_H}" rx="4" class="bm-box"/>'
        f'<line x1="{x}" y1="{y + BOX_H / 2}" x2="{x + BOX_W}" y2="{y + BOX_H / 2}" '
        f'class="bm-sep"/>'
    )
    for i, (name, score, side) in enumerate(
        ((match.home, match.home_score, "home"), (match.away, match.away_score, "away"))
    ):
        row_y = y + 16 + i * (BOX_H / 2)
        won = match.winner == side
        cls = "bm-line bm-won" if won else ("bm-line bm-tbd" if not name else "bm-line")
        shown = _clip(name) if name else labels["tbd"]
        parts.append(_text(x + 6, row_y, shown, **{"class": cls}))
        if score:
            parts.append(
                _text(
                    x + BOX_W - 6,
                    row_y,
                    score + (tb_mark if won else ""),
                    **{"class": cls + " bm-score", "text_anchor": "end"},
                )
            )
    if match.note:
        parts.append(
            _text(x + BOX_W, y - 3, match.note, **{"class": "bm-note", "text_anchor": "end"})
        )
    if match.href:
        parts.append("</a>")
    parts.append("</g>")
    return "".join(parts)


def bracket_svg(
    rounds: list[tuple[str, list[BracketMatch]]],
    *,
    third_place: BracketMatch | None = None,
    title: str = "Bracket",
    labels: dict[str, str] | None = None,
) -> str:
    """The whole bracket; ``labels`` holds translated words (``tbd``, ``tiebreak``, …)."""
    labels = {
        "tbd": "—",
        "tiebreak": "tie-break deals",
        "tiebreak_mark": "*",
        "third_place": "3rd place",
        **(labels or {}),
    }
    if not rounds:
        return ""
    first = max(1, len(rounds[0][1]))
    height = TOP + first * SLOT_H + PAD
    if third_place is not None:
        height += SLOT_H + 24
    width = len(rounds) * (BOX_W + GAP_X) - GAP_X + 2 * PAD
    parts = [
        f'<svg class="bracket" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="group" aria-labelledby="bracket-title">'
        f'<title id="bracket-title">{escape(title)}</title><g role="list">'
    ]
    centres: list[list[float]] = []
    for r, (name, matches) in enumerate(rounds):
        x = PAD + r * (BOX_W + GAP_X)
        parts.append(_text(x, 18, name, **{"class": "bm-round"}))
        slot = (first * SLOT_H) / max(1, len(matches))
        col: list[float] = []
        for i, match in enumerate(matches):
            cy = TOP + slot * (i + 0.5)
            col.append(cy)
            parts.append(_box(x, cy - BOX_H / 2, match, labels))
        centres.append(col)
    # connectors: from each box's right edge to the next round's box
    for r in range(len(centres) - 1):
        x_from = PAD + r * (BOX_W + GAP_X) + BOX_W
        x_to = x_from + GAP_X
        x_mid = x_from + GAP_X / 2
        for i, cy in enumerate(centres[r]):
            j = i // 2
            if j >= len(centres[r + 1]):
                continue
            ty = centres[r + 1][j]
            parts.append(
                f'<path class="bm-link" d="M{x_from:.0f} {cy:.0f} H{x_mid:.0f} V{ty:.0f} '
                f'H{x_to:.0f}" fill="none"/>'
            )
    if third_place is not None:
        x = PAD + (len(rounds) - 1) * (BOX_W + GAP_X)
        y = TOP + first * SLOT_H + 24
        parts.append(_text(x, y - 6, labels["third_place"], **{"class": "bm-round"}))
        parts.append(_box(x, y, third_place, labels))
    parts.append("</g></svg>")
    return "".join(parts)
