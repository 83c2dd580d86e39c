"""Card faces of our own, as small inline SVG, in a tournament's deck style.

Deck styles only change names and pictures (``deck_style`` is display-only in scopa/variants.py):
the capture value of a card is its rank.
These faces are plain shapes and text drawn here, so no card artwork is taken from elsewhere.
Pure Python: no Django import, so the builders can be tested and reused anywhere.
"""

from __future__ import annotations

import logging
from html import escape

logger = logging.getLogger(__name__)

SUITS = ("D", "C", "B", "S")
RANKS = tuple(range(1, 11))

# Suit names per deck family, in the family's own language (they are proper names of the cards).
_ITALIAN_SUITS = {"D": "denari", "C": "coppe", "B": "bastoni", "S": "spade"}
_SPANISH_SUITS = {"D": "oros", "C": "copas", "B": "bastos", "S": "espadas"}
_FRENCH_SUITS = {"D": "quadri", "C": "cuori", "B": "fiori", "S": "picche"}

_ITALIAN_FACES = {1: "Asso", 8: "Fante", 9: "Cavallo", 10: "Re"}
_SPANISH_FACES = {1: "As", 8: "Sota", 9: "Caballo", 10: "Rey"}
_FRENCH_FACES = {1: "A", 8: "J", 9: "Q", 10: "K"}

# Colours chosen for contrast on a white face (all ≥ 4.5:1).
_SUIT_COLOURS = {"D": "#8a5a00", "C": "#b00020", "B": "#1b5e20", "S": "#0d3c8c"}
_FRENCH_COLOURS = {"D": "#b00020", "C": "#b00020", "B": "#111111", "S": "#111111"}
_FRENCH_SYMBOLS = {"D": "♦", "C": "♥", "B": "♣", "S": "♠"}


def _family(deck_style: str) -> str:
    if deck_style == "francesi":
        return "french"
    if deck_style == "spagnole":
        return "spanish"
    return "italian"


def parse_card(code: str) -> tuple[int, str]:
    """``"7D"`` → ``(7, "D")``; raises ``ValueError`` for anything else."""
    code = str(code).strip().upper()
    rank, suit = code[:-1], code[-1:]
    if suit not in SUITS or not rank.isdigit() or int(rank) not in RANKS:
        raise ValueError(f"not a card: {code!r}")
    return int(rank), suit


def suit_name(suit: str, deck_style: str) -> str:
    family = _family(deck_style)
    names = {"french": _FRENCH_SUITS, "spanish": _SPANISH_SUITS}.get(family, _ITALIAN_SUITS)
    return names[suit]


def rank_label(rank: int, deck_style: str) -> str:
    """Short corner label: ``A``/``2``…``7``/``F C R`` (Italian), ``S C R`` (Spanish), ``J Q K``."""
    family = _family(deck_style)
    if family == "french":
        return _FRENCH_FACES.get(rank, str(rank))
    if rank == 1:
        return "A"
    if rank in (8, 9, 10):
        faces = _SPANISH_FACES if family == "spanish" else _ITALIAN_FACES
        return faces[rank][0]
    return str(rank)


def card_name(code: str, deck_style: str, lang: str | None = None) -> str:
    """Full name for screen readers and titles: ``"Fante di spade"``, ``"J picche"``.

    With ``lang`` (``"it"``/``"en"``) the rules engine's names are used, in that language.
    """
    rank, suit = parse_card(code)
    if lang is not None:
        try:
            from scopa import CARD_INDEX
            from scopa.cards import card_name as engine_name
        except ImportError:  # pragma: no cover - the engine ships with the project
            pass
        else:
            name = engine_name(CARD_INDEX[f"{rank}{suit}"], lang, deck_style)
            return name[:1].upper() + name[1:]
    family = _family(deck_style)
    faces = {"french": _FRENCH_FACES, "spanish": _SPANISH_FACES}.get(family, _ITALIAN_FACES)
    label = faces.get(rank, str(rank))
    joiner = " de " if family == "spanish" else (" " if family == "french" else " di ")
    return f"{label}{joiner}{suit_name(suit, deck_style)}"


def _suit_shape(suit: str, deck_style: str, cx: float, cy: float, r: float) -> str:
    """A simple pictogram of the suit centred on (cx, cy)."""
    if _family(deck_style) == "french":
        colour = _FRENCH_COLOURS[suit]
        return (
            f'<text x="{cx}" y="{cy + r * 0.7:.1f}" font-size="{r * 2.2:.1f}" '
            f'text-anchor="middle" fill="{colour}">{_FRENCH_SYMBOLS[suit]}</text>'
        )
    colour = _SUIT_COLOURS[suit]
    if suit == "D":  # a coin
        return (
            f'<circle cx="{cx}" cy="{cy}" r="{r}" fill="#f2c14e" stroke="{colour}" '
            f'stroke-width="2"/><circle cx="{cx}" cy="{cy}" r="{r * 0.45:.1f}" fill="none" '
            f'stroke="{colour}" stroke-width="1.5"/>'
        )
    if suit == "C":  # a cup
        return (
            f'<path d="M{cx - r} {cy - r} h{2 * r} q0 {r * 1.2:.1f} {-r} {r * 1.2:.1f} '
            f'q{-r} 0 {-r} {-r * 1.2:.1f}z" fill="{colour}"/>'
            f'<rect x="{cx - r * 0.15:.1f}" y="{cy + r * 0.2:.1f}" width="{r * 0.3:.1f}" '
            f'height="{r * 0.6:.1f}" fill="{colour}"/>'
            f'<rect x="{cx - r * 0.6:.1f}" y="{cy + r * 0.8:.1f}" width="{r * 1.2:.1f}" '
            f'height="{r * 0.25:.1f}" fill="{colour}"/>'
        )
    if suit == "B":  # a club (cudgel)
        return (
            f'<rect x="{cx - r * 0.25:.1f}" y="{cy - r}" width="{r * 0.5:.1f}" '
            f'height="{2 * r}" rx="{r * 0.25:.1f}" fill="{colour}" '
            f'transform="rotate(-20 {cx} {cy})"/>'
        )
    # a sword
    return (
        f'<g transform="rotate(20 {cx} {cy})" fill="{colour}">'
        f'<path d="M{cx} {cy - r * 1.1:.1f} l{r * 0.18:.1f} {r * 1.4:.1f} h{-r * 0.36:.1f}z"/>'
        f'<rect x="{cx - r * 0.5:.1f}" y="{cy + r * 0.3:.1f}" width="{r:.1f}" '
        f'height="{r * 0.18:.1f}"/>'
        f'<rect x="{cx - r * 0.1:.1f}" y="{cy + r * 0.48:.1f}" width="{r * 0.2:.1f}" '
        f'height="{r * 0.5:.1f}"/></g>'
    )


def card_svg(code: str, deck_style: str, *, width: int = 48, lang: str | None = None) -> str:
    """One card face as an inline ``<svg>`` with ``role="img"`` and an accessible name."""
    rank, suit = parse_card(code)
    height = round(width * 1.5)
    label = escape(rank_label(rank, deck_style))
    name = escape(card_name(code, deck_style, lang))
    colour = _FRENCH_COLOURS[suit] if _family(deck_style) == "french" else _SUIT_COLOURS[suit]
    face_fill = "#fffdf6" if rank < 8 else "#fff3d6"
    return (
        f'<svg class="card" viewBox="0 0 48 72" width="{width}" height="{height}" '
        f'role="img" aria-label="{name}"><title>{name}</title>'
        f'<rect x="1" y="1" width="46" height="70" rx="5" fill="{face_fill}" '
        f'stroke="#555" stroke-width="1.2"/>'
        f'<text x="5" y="15" font-size="13" font-weight="700" fill="{colour}" '
        f'font-family="system-ui, sans-serif">{label}</text>'
        f'<text x="43" y="66" font-size="13" font-weight="700" fill="{colour}" '
        f'text-anchor="end" font-family="system-ui, sans-serif">{label}</text>'
        f"{_suit_shape(suit, deck_style, 24, 38, 11)}</svg>"
    )


def card_back_svg(*, width: int = 48) -> str:
    """A face-down card (for hidden hands)."""
    height = round(width * 1.5)
    return (
        f'<svg class="card card-back" viewBox="0 0 48 72" width="{width}" height="{height}" '
        f'aria-hidden="true"><rect x="1" y="1" width="46" height="70" rx="5" fill="#234e70" '
        f'stroke="#555"/><rect x="6" y="6" width="36" height="60" rx="3" fill="none" '
        f'stroke="#9fc3e6" stroke-dasharray="3 2"/></svg>'
    )


def deck_faces(
    deck_style: str, *, width: int = 48, lang: str | None = None
) -> dict[str, dict[str, str]]:
    """Every card of the deck: code → ``{"svg": ..., "name": ...}`` for the replay viewer."""
    return {
        f"{rank}{suit}": {
            "svg": card_svg(f"{rank}{suit}", deck_style, width=width, lang=lang),
            "name": card_name(f"{rank}{suit}", deck_style, lang),
        }
        for suit in SUITS
        for rank in RANKS
    }
