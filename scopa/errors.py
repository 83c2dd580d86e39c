"""Engine errors and the referee's sentences, in Italian and English.

Codes are stable strings that other parts store and test against; the sentences may be reworded.
Card parameters are rendered per language: keys ending in `card` hold one card index, keys ending
in `cards` a list of card indexes.
"""

from typing import Any

from .cards import card_code, card_name, cards_text

# Sentences per stable code: code -> (Italian, English) templates.
Catalog = dict[str, tuple[str, str]]

LANGS = ("it", "en")

RECORD_MESSAGES: Catalog = {
    "invalid_json": (
        "il documento non è JSON leggibile ({detail})",
        "the document is not readable JSON ({detail})",
    ),
    "wrong_type": ("{field}: tipo sbagliato ({detail})", "{field}: wrong type ({detail})"),
    "missing_field": ("{field}: campo obbligatorio mancante", "{field}: required field missing"),
    "unknown_field": ("{field}: campo sconosciuto", "{field}: unknown field"),
    "unknown_schema": (
        "{field}: schema sconosciuto {value}, atteso scopa-match/1",
        "{field}: unknown schema {value}, expected scopa-match/1",
    ),
    "unknown_variant": (
        "{field}: variante sconosciuta {value}",
        "{field}: unknown variant {value}",
    ),
    "unknown_option": (
        "{field}: opzione sconosciuta (un refuso non deve cambiare le regole)",
        "{field}: unknown option (a typo must not change the rules)",
    ),
    "option_type": (
        "{field}: valore dell'opzione non valido ({detail})",
        "{field}: invalid option value ({detail})",
    ),
    "invalid_value": ("{field}: valore non valido ({detail})", "{field}: invalid value ({detail})"),
    "unknown_card": ("{field}: carta sconosciuta {value}", "{field}: unknown card {value}"),
    "duplicate_card": (
        "{field}: la carta {value} compare due volte nel mazzo",
        "{field}: card {value} appears twice in the deck",
    ),
    "deck_size": (
        "{field}: il mazzo ha {count} carte invece di 40",
        "{field}: the deck has {count} cards instead of 40",
    ),
    "seat_count": (
        "{field}: {count} posti; sono ammessi 2, 3, 4 o 6 giocatori",
        "{field}: {count} seats; 2, 3, 4 or 6 players are allowed",
    ),
    "seat_out_of_range": (
        "{field}: il posto {value} non esiste (posti da 0 a {max})",
        "{field}: seat {value} does not exist (seats 0 to {max})",
    ),
    "declared_length": (
        "{field}: {count} punteggi dichiarati per {sides} squadre",
        "{field}: {count} declared scores for {sides} sides",
    ),
    "file_unreadable": (
        "il file non si può leggere ({detail})",
        "the file cannot be read ({detail})",
    ),
    "unreadable": (
        "{field}: record illeggibile ({detail})",
        "{field}: unreadable record ({detail})",
    ),
}

PLAY_MESSAGES: Catalog = {
    "wrong_dealer": (
        "il mazziere dovrebbe essere il posto {expected}, non il posto {got}",
        "the dealer should be seat {expected}, not seat {got}",
    ),
    "not_void": (
        "la smazzata è segnata nulla, ma la regola dei re non la annulla ({kings} re in tavola)",
        "the deal is marked void, but the kings rule does not void it ({kings} kings on the table)",
    ),
    "must_be_void": (
        "in tavola ci sono {kings} re: la smazzata è nulla, la ridistribuisce lo stesso mazziere",
        "the table shows {kings} kings: the deal is void, the same dealer deals again",
    ),
    "void_with_plays": (
        "una smazzata nulla non può avere giocate",
        "a void deal cannot have plays",
    ),
    "wrong_seat": (
        "tocca al posto {expected}, non al posto {got}",
        "it is seat {expected}'s turn, not seat {got}'s",
    ),
    "card_not_in_hand": (
        "{card} non è in mano al posto {seat}",
        "{card} is not in seat {seat}'s hand",
    ),
    "take_not_on_table": (
        "la presa {taken_cards} comprende carte che non sono in tavola o che sono ripetute "
        "({missing_cards})",
        "the capture {taken_cards} lists cards that are not on the table or repeated "
        "({missing_cards})",
    ),
    "must_take_equal_rank": (
        "{card} deve prendere {equal_choice}, non {taken_cards}",
        "{card} must take the {equal_choice} on the table, not {taken_cards}",
    ),
    "wrong_sum": (
        "{card} vale {rank}, ma {taken_cards} fa {total}",
        "{card} is worth {rank}, but {taken_cards} adds up to {total}",
    ),
    "wrong_fifteen": (
        "{card} con {taken_cards} fa {total}, non 15",
        "{card} with {taken_cards} adds up to {total}, not 15",
    ),
    "must_capture": (
        "{card} può prendere ({options}): la presa è obbligatoria",
        "{card} can capture ({options}): capture is compulsory",
    ),
    "ace_must_take_all": (
        "senza assi in tavola {card} deve prendere tutte le carte ({table_cards}), "
        "non {taken_cards}",
        "with no ace on the table {card} must take every card ({table_cards}), not {taken_cards}",
    ),
    "missing_plays": (
        "la smazzata non è finita: mancano giocate (tocca al posto {seat})",
        "the deal is not finished: plays are missing (seat {seat} is to play)",
    ),
    "extra_plays": (
        "la smazzata era già finita: giocata in più",
        "the deal was already over: extra play",
    ),
    "missing_deals": (
        "la partita non è finita ({reason_it}): manca la smazzata {deal}",
        "the match is not over ({reason_en}): deal {deal} is missing",
    ),
    "extra_deals": (
        "la partita era già finita ({reason_it}): smazzata in più",
        "the match was already over ({reason_en}): extra deal",
    ),
    "outcome_after_end": (
        "la partita era già finita ({reason_it}): tempo scaduto o abbandono fuori partita",
        "the match was already over ({reason_en}): the timeout or abandon came after it",
    ),
    "timeout_not_on_turn": (
        "il posto {seat} non era di turno (toccava al posto {expected}): non può aver finito il "
        "tempo",
        "seat {seat} was not to play (seat {expected} was): it cannot have run out of time",
    ),
    "undeclared_timeout": (
        "il posto {seat} ha finito il tempo ({kind_it}) a questa giocata, ma l'esito registrato "
        "non lo dice",
        "seat {seat} ran out of time ({kind_en}) at this play, but the outcome does not say so",
    ),
    "timeout_not_confirmed": (
        "l'orologio non conferma il tempo scaduto dichiarato per il posto {seat}",
        "the clock does not confirm the declared timeout of seat {seat}",
    ),
    "time_up_mismatch": (
        "il tempo di gioco è scaduto nella smazzata {expected}, non nella {got}",
        "playing time ran out in deal {expected}, not in deal {got}",
    ),
    "board_game": (
        "le smazzate preparate di questo turno sono per {expected} giocatori, il record è di {got}",
        "this round's boards are for {expected} players, the record is for {got}",
    ),
    "board_end": (
        "il turno si gioca su {expected} smazzate preparate: il record deve finire dopo "
        "{expected} smazzate",
        "the round plays {expected} boards: the record must end after {expected} deals",
    ),
    "board_dealer": (
        "la smazzata preparata n. {board} la distribuisce il posto {expected}, non il posto {got}",
        "board {board} is dealt by seat {expected}, not seat {got}",
    ),
    "board_deck": (
        "il mazzo non è quello della smazzata preparata n. {board}: alla carta {position} c'è "
        "{got_cards} invece di {expected_cards}",
        "the deck is not board {board}'s: card {position} is {got_cards} instead of "
        "{expected_cards}",
    ),
    "board_extra_deal": (
        "il turno ha solo {count} smazzate preparate: smazzata in più",
        "the round has only {count} boards: extra deal",
    ),
}


# Sentences for a special case of a code (same code, other wording): (code, when) -> (it, en).
PLAY_MESSAGE_VARIANTS: dict[tuple[str, str], tuple[str, str]] = {
    ("ace_must_take_all", "laid_down"): (
        "senza assi in tavola {card} deve prendere tutte le carte ({table_cards}), "
        "non può restare in tavola",
        "with no ace on the table {card} must take every card ({table_cards}), "
        "it cannot be laid down",
    ),
    ("time_up_mismatch", "never_up"): (
        "secondo l'orologio del server il tempo di gioco non è scaduto in nessuna smazzata "
        "registrata, non nella {got}",
        "by the server clock playing time did not run out in any recorded deal, not in deal {got}",
    ),
    ("time_up_mismatch", "undeclared"): (
        "il tempo di gioco è scaduto nella smazzata {expected}, ma l'esito non lo dichiara "
        "(time_up_in_deal)",
        "playing time ran out in deal {expected}, but the outcome does not say so "
        "(time_up_in_deal)",
    ),
}


def _play_catalog(code: str, params: dict[str, Any]) -> Catalog:
    if code == "ace_must_take_all" and not params.get("taken_cards"):
        return {code: PLAY_MESSAGE_VARIANTS[(code, "laid_down")]}
    if code == "time_up_mismatch" and "-" in (params.get("expected"), params.get("got")):
        which = "never_up" if params.get("expected") == "-" else "undeclared"
        return {code: PLAY_MESSAGE_VARIANTS[(code, which)]}
    return PLAY_MESSAGES


class EngineError(Exception):
    """Base class of every error the engine raises on purpose."""


def _render_params(params: dict[str, Any], lang: str) -> dict[str, Any]:
    rendered: dict[str, Any] = {}
    for key, value in params.items():
        if key.endswith("_cards") and isinstance(value, list | tuple):
            rendered[key] = (
                cards_text(value, lang) if value else ("nulla" if lang == "it" else "nothing")
            )
        elif key == "card" and isinstance(value, int):
            rendered[key] = (
                card_code(value) if lang == "en" else card_name(value, "it", article=True)
            )
        elif key.endswith("_choice") and isinstance(value, list | tuple):
            sep = " o " if lang == "it" else " or "
            if lang == "en":
                rendered[key] = sep.join(card_code(card) for card in value)
            else:
                rendered[key] = sep.join(card_name(card, "it", article=True) for card in value)
        elif key == "options" and isinstance(value, list):
            sep = " oppure " if lang == "it" else " or "
            rendered[key] = sep.join(cards_text(option, lang) for option in value)
        else:
            rendered[key] = value
    return rendered


def format_message(catalog: Catalog, code: str, lang: str, params: dict[str, Any]) -> str:
    templates = catalog.get(code)
    if templates is None:
        return code
    template = templates[1] if lang == "en" else templates[0]
    try:
        return template.format(**_render_params(params, lang))
    except (KeyError, IndexError, ValueError):
        return f"{code}: {params}"


class RecordError(EngineError):
    """The record cannot be read: stable `code`, `field` a JSON path like `deals[2].deck[5]`."""

    def __init__(self, code: str, field: str = "", **params: Any) -> None:
        self.code = code
        self.field = field or "$"
        self.params = {"field": self.field, **params}
        super().__init__(self.message("en"))

    def message(self, lang: str = "it") -> str:
        return format_message(RECORD_MESSAGES, self.code, lang, self.params)

    def as_dict(self, lang: str = "it") -> dict[str, Any]:
        return {
            "code": self.code,
            "field": self.field,
            "message": self.message(lang),
            "messages": {code: self.message(code) for code in LANGS},
        }


class PlayError:
    """One illegality found in replay: position, stable code and the referee's sentence."""

    __slots__ = ("code", "deal", "params", "play")

    def __init__(self, code: str, deal: int, play: int | None, **params: Any) -> None:
        self.code = code
        self.deal = deal
        self.play = play
        self.params = params

    def message(self, lang: str = "it") -> str:
        # the position is available to the sentence too (`manca la smazzata {deal}`)
        params = {"deal": self.deal, "play": self.play, **self.params}
        text = format_message(_play_catalog(self.code, params), self.code, lang, params)
        if lang == "en":
            where = f"deal {self.deal}" + ("" if self.play is None else f", play {self.play}")
        else:
            where = f"smazzata {self.deal}" + (
                "" if self.play is None else f", giocata {self.play}"
            )
        return f"{where}: {text}"

    def as_dict(self, lang: str = "it") -> dict[str, Any]:
        return {
            "deal": self.deal,
            "play": self.play,
            "code": self.code,
            "message": self.message(lang),
            "messages": {code: self.message(code) for code in LANGS},
        }

    def __repr__(self) -> str:
        return f"PlayError({self.code!r}, deal={self.deal}, play={self.play})"


# The deal-sheet referee's sentences (`sheet.py`): a hand-entered deal that cannot happen.
SHEET_MESSAGES = {
    "unknown_category": (
        "{side}: «{category}» non è un punto della variante {variant}",
        "{side}: “{category}” is not a scoring category of the variant {variant}",
    ),
    "both_sides": (
        "{category}: in una smazzata si assegna a una squadra sola, qui compare per entrambe",
        "{category}: a deal gives it to one side at most; here both sides have it",
    ),
    "too_many": (
        "{side}, {category}: {points} punti, ma una smazzata ne dà al massimo {max}",
        "{side}, {category}: {points} points, but a deal gives at most {max}",
    ),
    "too_many_total": (
        "{category}: {points} punti in tutto, ma una smazzata ne dà al massimo {max}",
        "{category}: {points} points in all, but a deal gives at most {max}",
    ),
    "impossible_value": (
        "{side}, {category}: {points} non è un punteggio possibile (possibili: {values})",
        "{side}, {category}: {points} is not a possible score (possible: {values})",
    ),
    "scope_side": (
        "{side}: {points} scope in una smazzata non sono possibili, al massimo {max} ({why_it})",
        "{side}: {points} scope in one deal cannot happen, at most {max} ({why_en})",
    ),
    "scope_combination": (
        "{counts} scope nella stessa smazzata non sono possibili ({why_it})",
        "{counts} scope in the same deal cannot happen ({why_en})",
    ),
    "implied": (
        "{side}: con {category} a {points} le spetta anche il punto {implied_it}",
        "{side}: with {category} at {points} the {implied_en} point is theirs too",
    ),
}
