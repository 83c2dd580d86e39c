"""Rule presets as data: variants, option defaults and deck styles.

Kept as one literal so an organizer-facing page or a JSON export can show exactly what the
engine uses; the engine reads these tables instead of branching on variant names.
"""

from typing import Any

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

# JSON-shaped data (read by pages and exports as it is), so its values are typed loosely.
PRESETS: dict[str, Any] = {
    "variants": {
        "scopa": {
            "name": {"it": "Scopa", "en": "Scopa"},
            "seed": "000, 001, 004",
            "capture": "equal_rank_or_sum",
            "aces_take_all": False,
            "dealer_fifteen": False,
            "scoring": "classic",
            "usual_targets": [7, 11, 21],
        },
        "scopa-d-assi": {
            "name": {
                "it": "Scopa d'assi (Asso piglia tutto)",
                "en": "Scopa d'assi (ace takes all)",
            },
            "seed": "003",
            "capture": "equal_rank_or_sum",
            "aces_take_all": True,
            "dealer_fifteen": False,
            "scoring": "classic",
            "usual_targets": [11, 21],
        },
        "scopa-15": {
            "name": {"it": "Scopa a 15 (escoba)", "en": "Scopa 15 (escoba)"},
            "seed": "002",
            "capture": "fifteen",
            "aces_take_all": False,
            "dealer_fifteen": True,
            "scoring": "fifteen",
            "all_sevens_points": 3,
            "usual_targets": [21, 31],
        },
    },
    "options": {
        "rebello": {
            "type": "bool",
            "it": "Rebello (re di denari, 1 punto)",
            "en": "Rebello (king of denari, 1 point)",
        },
        "napola": {
            "type": "bool",
            "it": "Napola (asso, 2 e 3 di denari e seguenti)",
            "en": "Napola (ace, 2 and 3 of denari and following)",
        },
        "primiera_missing_suit": {
            "type": "choice",
            "choices": ["loses", "compare_present"],
            "it": "Primiera con un seme mancante",
            "en": "Primiera with a missing suit",
        },
        "void_three_kings": {
            "type": "bool",
            "it": "Smazzata nulla con tre o quattro re in tavola",
            "en": "Void deal with three or four kings on the table",
        },
        "forced_capture": {
            "type": "bool",
            "it": "Presa obbligatoria (scopa a 15)",
            "en": "Compulsory capture (scopa 15)",
        },
        "carte_viste": {"type": "bool", "it": "Carte viste", "en": "Seen cards shown"},
        "carte_scoperte": {
            "type": "bool",
            "it": "Carte scoperte tra compagni",
            "en": "Partners' cards face up",
        },
        "deck_style": {"type": "deck_style", "it": "Tipo di carte", "en": "Deck style"},
    },
    "default_options": {
        "scopa": {
            "rebello": False,
            "napola": False,
            "primiera_missing_suit": "loses",
            "void_three_kings": True,
            "forced_capture": True,
            "carte_viste": False,
            "carte_scoperte": False,
            "deck_style": "napoletane",
        },
        "scopa-d-assi": {
            "rebello": False,
            "napola": False,
            "primiera_missing_suit": "loses",
            "void_three_kings": True,
            "forced_capture": True,
            "carte_viste": False,
            "carte_scoperte": False,
            "deck_style": "napoletane",
        },
        "scopa-15": {
            "rebello": False,
            "napola": False,
            "primiera_missing_suit": "loses",
            "void_three_kings": False,
            "forced_capture": True,
            "carte_viste": False,
            "carte_scoperte": False,
            "deck_style": "spagnole",
        },
    },
    "deck_styles": {
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
    },
}
