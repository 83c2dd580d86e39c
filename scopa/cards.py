"""Cards as small ints (0..39) so replay can use lists, bitmasks and lookup tables.

Index = suit * 10 + (rank - 1), suits in the order D, C, B, S. The text form `7D`, `10S` is the
one the match record uses; names in Italian and English are only for referee messages.
"""

from collections.abc import Iterable

from .presets import PRESETS

SUITS = "DCBS"
DENARI = 0
RANKS = tuple(range(1, 11))
ALL_CARDS = tuple(range(40))
FULL_DECK_MASK = (1 << 40) - 1

CARD_CODES = tuple(f"{rank}{suit}" for suit in SUITS for rank in RANKS)
CARD_INDEX = {code: index for index, code in enumerate(CARD_CODES)}
RANK_OF = tuple(index % 10 + 1 for index in ALL_CARDS)
SUIT_OF = tuple(index // 10 for index in ALL_CARDS)
BIT = tuple(1 << index for index in ALL_CARDS)

SETTEBELLO = CARD_INDEX["7D"]
REBELLO = CARD_INDEX["10D"]
DENARI_MASK = (1 << 10) - 1
SEVENS_MASK = sum(BIT[CARD_INDEX[f"7{suit}"]] for suit in SUITS)

# Primiera value of each rank (index rank - 1): 7=21, 6=18, 1=16, 5=15, 4=14, 3=13, 2=12, faces 10.
PRIMIERA_VALUE = (16, 12, 13, 14, 15, 18, 21, 10, 10, 10)
# Best primiera value for every 10-bit set of ranks of one suit (0 when the suit is absent).
PRIMIERA_OF_SUIT_MASK = tuple(
    max((PRIMIERA_VALUE[r] for r in range(10) if mask >> r & 1), default=0) for mask in range(1024)
)

DECK_STYLES = PRESETS["deck_styles"]

_RANK_WORDS_IT = {1: "asso", 8: "fante", 9: "cavallo", 10: "re"}
_RANK_WORDS_EN = {1: "ace", 8: "jack", 9: "knight", 10: "king"}


def card_code(card: int) -> str:
    """Text form used in records and English messages (`8S`)."""
    return CARD_CODES[card]


def card_name(card: int, lang: str = "it", style: str = "napoletane", article: bool = False) -> str:
    """Human name, e.g. `il fante di spade`, `l'asso di denari`, `the 7 of coins`."""
    rank, suit = RANK_OF[card], SUIT_OF[card]
    deck = DECK_STYLES.get(style, DECK_STYLES["napoletane"])
    lang = "en" if lang == "en" else "it"
    suit_name = deck["suits"][lang][suit]
    if rank >= 8:
        rank_word = deck["faces"][lang][rank - 8]
    elif rank == 1:
        rank_word = _RANK_WORDS_IT[1] if lang == "it" else _RANK_WORDS_EN[1]
    else:
        rank_word = str(rank)
    if lang == "en":
        name = f"{rank_word} of {suit_name}"
        return f"the {name}" if article else name
    name = f"{rank_word} di {suit_name}"
    if not article:
        return name
    if rank_word[0] in "aeiouAEIOU" or rank_word in ("8", "11"):
        return f"l'{name}"
    return f"il {name}"


def cards_text(cards: Iterable[int], lang: str = "it") -> str:
    """A set of cards as a referee writes it: `5D+3B` in English, names joined by `+` in Italian."""
    if lang == "en":
        return "+".join(CARD_CODES[c] for c in cards)
    return " + ".join(card_name(c, "it") for c in cards)


def mask_of(cards: Iterable[int]) -> int:
    mask = 0
    for card in cards:
        mask |= BIT[card]
    return mask


def cards_of_mask(mask: int) -> list[int]:
    return [card for card in ALL_CARDS if mask >> card & 1]
