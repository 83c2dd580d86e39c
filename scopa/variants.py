"""The variants of Scopa, one class each, collected in one registry; rule options and scoring
categories with their Italian and English labels.

This is the only place that says what a variant is: its capture rule, the categories a deal is
scored in (with the most points each can give one side in one deal, and whether it goes to one
side at most), its default options, which options apply to it and its usual targets. The rules
engine, the deal-sheet referee (`sheet.py`), the pages and the database choices all ask here.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

logger = logging.getLogger(__name__)

Lang = Literal["it", "en"]
OptionValue = bool | str
CaptureRule = Literal["equal_rank_or_sum", "fifteen"]


@dataclass(frozen=True, slots=True)
class Label:
    """A text in Italian and English (Italian first: it is the product's language)."""

    it: str
    en: str

    def __call__(self, lang: str = "it") -> str:
        return self.en if lang == "en" else self.it

    def as_dict(self) -> dict[str, str]:
        return {"it": self.it, "en": self.en}


@dataclass(frozen=True, slots=True)
class Category:
    """A breakdown key of a deal's points.

    `max_points`: the most one side can get from it in one deal (None: the referee works it out
    from the seats, as for scope). `one_side`: at most one side gets it in a deal.
    `step`: points come in multiples of it. `values`: when only some values are possible.
    """

    key: str
    label: Label
    max_points: int | None = 1
    one_side: bool = True
    step: int = 1
    values: frozenset[int] | None = None
    option: str | None = None


@dataclass(frozen=True, slots=True)
class OptionSpec:
    """A rule option (docs/match-record.md, "Options"): its label, its kind and, for a choice,
    the labelled values. `display_only` options change how a table is shown, never legality or
    scoring."""

    key: str
    label: Label
    kind: Literal["bool", "choice", "deck_style"]
    choices: tuple[tuple[str, Label], ...] = ()
    display_only: bool = False

    def value_label(self, value: OptionValue, lang: str = "it") -> str:
        if isinstance(value, bool):
            if lang == "en":
                return "yes" if value else "no"
            return "sì" if value else "no"
        for key, label in self.choices:
            if key == value:
                return label(lang)
        return str(value)


OPTIONS: Mapping[str, OptionSpec] = MappingProxyType(
    {
        spec.key: spec
        for spec in (
            OptionSpec(
                "rebello",
                Label("Rebello (re di denari, 1 punto)", "Rebello (king of denari, 1 point)"),
                "bool",
            ),
            OptionSpec(
                "napola",
                Label(
                    "Napola (asso, 2 e 3 di denari e seguenti)",
                    "Napola (ace, 2 and 3 of denari and following)",
                ),
                "bool",
            ),
            OptionSpec(
                "primiera_missing_suit",
                Label("Primiera con un seme mancante", "Primiera with a missing suit"),
                "choice",
                choices=(
                    ("loses", Label("non può vincerla", "cannot win it")),
                    (
                        "compare_present",
                        Label("si confrontano i semi posseduti", "compare the suits held"),
                    ),
                ),
            ),
            OptionSpec(
                "void_three_kings",
                Label(
                    "Smazzata nulla con tre o quattro re in tavola",
                    "Void deal with three or four kings on the table",
                ),
                "bool",
            ),
            OptionSpec(
                "forced_capture",
                Label("Presa obbligatoria (scopa a 15)", "Compulsory capture (scopa 15)"),
                "bool",
            ),
            OptionSpec("carte_viste", Label("Carte viste", "Seen cards shown"), "bool", (), True),
            OptionSpec(
                "carte_scoperte",
                Label("Carte scoperte tra compagni", "Partners' cards face up"),
                "bool",
                (),
                True,
            ),
            OptionSpec("deck_style", Label("Tipo di carte", "Deck style"), "deck_style", (), True),
        )
    }
)

CATEGORY_LABELS: Mapping[str, Label] = MappingProxyType(
    {
        "scope": Label("Scope", "Scope"),
        "carte": Label("Carte", "Cards"),
        "denari": Label("Denari", "Coins"),
        "settebello": Label("Settebello", "Settebello"),
        "primiera": Label("Primiera", "Primiera"),
        "rebello": Label("Rebello", "Rebello"),
        "napola": Label("Napola", "Napola"),
        "sette": Label("Sette", "Sevens"),
        "poche_carte": Label("Meno di 10 carte", "Fewer than 10 cards"),
        # not scoring categories: the timeout penalty when an engine reports it apart, and the
        # admin's old catch-all column, still shown on results stored with it
        "penalty": Label("Penalità", "Penalty"),
        "other": Label("Altro", "Other"),
    }
)
"""Every breakdown key the product stores, labelled once."""


def category_label(key: str, lang: str = "it") -> str:
    """The label of a breakdown key; an unknown stored key is shown readably."""
    label = CATEGORY_LABELS.get(key)
    if label is None:
        return key.replace("_", " ").capitalize()
    return label(lang)


def _category(
    key: str,
    *,
    max_points: int | None = 1,
    one_side: bool = True,
    step: int = 1,
    values: frozenset[int] | None = None,
    option: str | None = None,
) -> Category:
    return Category(key, CATEGORY_LABELS[key], max_points, one_side, step, values, option)


SHARED_OPTIONS = ("carte_viste", "carte_scoperte", "deck_style")


class Variant:
    """A variant of Scopa. Subclasses set the class attributes; instances are registry entries."""

    key: str = ""
    name: Label = Label("", "")
    seeds: str = ""
    capture: CaptureRule = "equal_rank_or_sum"
    aces_take_all: bool = False
    dealer_fifteen: bool = False
    all_sevens_points: int = 3
    usual_targets: tuple[int, ...] = ()
    options: tuple[str, ...] = ()
    """The options that apply to this variant (the others are ignored by its rules)."""
    default_options: Mapping[str, OptionValue] = MappingProxyType({})
    base_categories: tuple[Category, ...] = ()
    option_categories: tuple[Category, ...] = ()
    """Categories that exist only when their option is on."""

    @property
    def fifteen(self) -> bool:
        return self.capture == "fifteen"

    def applies(self, option: str) -> bool:
        return option in self.options

    def categories(self, options: Mapping[str, object] | None = None) -> tuple[Category, ...]:
        """The scoring categories of a deal under `options` (base first, then option ones)."""
        values: dict[str, object] = dict(self.default_options)
        values.update(options or {})
        extra = tuple(c for c in self.option_categories if c.option and values.get(c.option))
        return self.base_categories + extra

    def category_keys(self, options: Mapping[str, object] | None = None) -> tuple[str, ...]:
        return tuple(c.key for c in self.categories(options))

    def as_dict(self) -> dict[str, object]:
        """The variant as plain data (the engine's exported presets)."""
        data: dict[str, object] = {
            "name": self.name.as_dict(),
            "seed": self.seeds,
            "capture": self.capture,
            "aces_take_all": self.aces_take_all,
            "dealer_fifteen": self.dealer_fifteen,
            "scoring": "fifteen" if self.fifteen else "classic",
            "usual_targets": list(self.usual_targets),
            "options": list(self.options),
            "categories": [c.key for c in self.base_categories + self.option_categories],
        }
        if self.fifteen:
            data["all_sevens_points"] = self.all_sevens_points
        return data

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.key!r}>"


class Scopa(Variant):
    """The classic game (seeds 000, 001, 004): equal rank first, else a sum."""

    key = "scopa"
    name = Label("Scopa", "Scopa")
    seeds = "000, 001, 004"
    usual_targets: tuple[int, ...] = (7, 11, 21)
    options = (
        "rebello",
        "napola",
        "primiera_missing_suit",
        "void_three_kings",
        *SHARED_OPTIONS,
    )
    default_options = MappingProxyType(
        {
            "rebello": False,
            "napola": False,
            "primiera_missing_suit": "loses",
            "void_three_kings": True,
            "forced_capture": True,
            "carte_viste": False,
            "carte_scoperte": False,
            "deck_style": "napoletane",
        }
    )
    base_categories = (
        _category("scope", max_points=None, one_side=False),
        _category("carte"),
        _category("denari"),
        _category("settebello"),
        _category("primiera"),
    )
    option_categories = (
        _category("rebello", option="rebello"),
        # napola: 3 for ace, 2 and 3 of denari, +1 per further denaro in a row, 10 for all ten
        _category(
            "napola",
            max_points=10,
            values=frozenset({0, *range(3, 11)}),
            option="napola",
        ),
    )


class ScopaDAssi(Scopa):
    """Asso piglia tutto (seed 003): as scopa, and an ace takes the whole table."""

    key = "scopa-d-assi"
    name = Label("Scopa d'assi (asso piglia tutto)", "Scopa d'assi (ace takes all)")
    seeds = "003"
    aces_take_all = True
    usual_targets: tuple[int, ...] = (11, 21)


class Scopa15(Variant):
    """Scopa a 15, the Spanish escoba (seed 002): captures make 15 with the played card."""

    key = "scopa-15"
    name = Label("Scopa a 15 (escoba)", "Scopa 15 (escoba)")
    seeds = "002"
    capture = "fifteen"
    dealer_fifteen = True
    # Reading of seed 002 kept here only: all four sevens make 3 points in all, settebello and
    # most-sevens included.
    all_sevens_points = 3
    usual_targets: tuple[int, ...] = (21, 31)
    options = ("forced_capture", *SHARED_OPTIONS)
    default_options = MappingProxyType(
        {
            "rebello": False,
            "napola": False,
            "primiera_missing_suit": "loses",
            "void_three_kings": False,
            "forced_capture": True,
            "carte_viste": False,
            "carte_scoperte": False,
            "deck_style": "spagnole",
        }
    )
    base_categories = (
        _category("scope", max_points=None, one_side=False),
        # most denari 1, all ten 1 more
        _category("denari", max_points=2),
        _category("settebello"),
        # most sevens 1; all four sevens 1 more (settebello is the third of the three)
        _category("sette", max_points=all_sevens_points - 1),
        _category("carte"),
        # 2 to each opponent of a side that took fewer than 10 cards; the referee works out
        # the most and whether it is one side's (it depends on the seats and forced capture)
        _category("poche_carte", max_points=None, one_side=False, step=2),
    )


VARIANTS: Mapping[str, Variant] = MappingProxyType(
    {variant.key: variant for variant in (Scopa(), ScopaDAssi(), Scopa15())}
)
"""Every variant by its record name (`scopa-match/1` `variant`)."""


def get_variant(key: str) -> Variant:
    """The registry entry of `key`; KeyError for a name that is no variant."""
    return VARIANTS[key]


@dataclass(frozen=True, slots=True)
class ShownOption:
    """One option as a page shows it."""

    key: str
    label: str
    value: str
    raw: OptionValue = field(default=False)


def options_shown(
    variant_key: str, options: Mapping[str, object] | None, lang: str = "it"
) -> list[ShownOption]:
    """The options in force that apply to the variant (deck style left to the caller), with
    their values resolved from the variant's defaults, in registry order."""
    variant = VARIANTS.get(variant_key)
    if variant is None:
        return []
    values: dict[str, object] = dict(variant.default_options)
    values.update({k: v for k, v in (options or {}).items() if k in OPTIONS})
    shown = []
    for key in variant.options:
        spec = OPTIONS[key]
        if spec.kind == "deck_style":
            continue
        value = values.get(key)
        if not isinstance(value, bool | str):
            continue
        shown.append(ShownOption(key, spec.label(lang), spec.value_label(value, lang), value))
    return shown
