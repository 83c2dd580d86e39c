"""Rule presets as data: deck styles, and the variants and options of `variants.py` as plain
data, so an organizer-facing page or a JSON export can show exactly what the engine uses.

The variants themselves are described once, in `variants.py`; `PRESETS` is derived from it.
"""

from typing import Any

from .variants import OPTIONS, VARIANTS

# Suit and face names shared by the deck styles (French-suited decks: quadri = denari, ...).
ITALIAN_SUITS = {
    "it": ["denari", "coppe", "bastoni", "spade"],
    "en": ["coins", "cups", "clubs", "swords"],
}
FRENCH_SUITS = {
    "it": ["quadri", "cuori", "fiori", "picche"],
    "en": ["diamonds", "hearts", "clubs", "spades"],
}
ITALIAN_FACES = {"it": ["fante", "cavallo", "re"], "en": ["jack", "knight", "king"]}

DECK_STYLES_DATA: dict[str, dict[str, Any]] = {
    "napoletane": {
        "it": "Napoletane",
        "en": "Neapolitan",
        "suits": ITALIAN_SUITS,
        "faces": ITALIAN_FACES,
    },
    "piacentine": {
        "it": "Piacentine",
        "en": "Piacentine",
        "suits": ITALIAN_SUITS,
        "faces": ITALIAN_FACES,
    },
    "siciliane": {
        "it": "Siciliane",
        "en": "Sicilian",
        "suits": ITALIAN_SUITS,
        "faces": ITALIAN_FACES,
    },
    "piemontesi": {
        "it": "Piemontesi",
        "en": "Piedmontese",
        "suits": FRENCH_SUITS,
        "faces": {"it": ["fante", "donna", "re"], "en": ["jack", "queen", "king"]},
    },
    "trevisane": {
        "it": "Trevisane",
        "en": "Trevisan",
        "suits": ITALIAN_SUITS,
        "faces": ITALIAN_FACES,
    },
    "spagnole": {
        "it": "Spagnole",
        "en": "Spanish",
        "suits": ITALIAN_SUITS,
        "faces": ITALIAN_FACES,
    },
    "francesi": {
        "it": "Francesi",
        "en": "French",
        "suits": FRENCH_SUITS,
        "faces": {"it": ["J", "Q", "K"], "en": ["J", "Q", "K"]},
    },
}


def _option_data(key: str) -> dict[str, Any]:
    spec = OPTIONS[key]
    data: dict[str, Any] = {"type": spec.kind, "it": spec.label.it, "en": spec.label.en}
    if spec.choices:
        data["choices"] = [value for value, _label in spec.choices]
    return data


PRESETS: dict[str, Any] = {
    "variants": {key: variant.as_dict() for key, variant in VARIANTS.items()},
    "options": {key: _option_data(key) for key in OPTIONS},
    "default_options": {key: dict(variant.default_options) for key, variant in VARIANTS.items()},
    "deck_styles": DECK_STYLES_DATA,
}
