"""Forms of the organizer's desk: the new-tournament wizard and the lines.

Rule options are offered from the engine's registry through :func:`rule_options` (one place
to change when the registry becomes per variant); tie-breaks from ``TieBreak``.
"""

import datetime
import io
import logging
import re
from collections.abc import Sequence
from typing import cast

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import get_language, pgettext_lazy
from django.utils.translation import gettext_lazy as _

from scopa.presets import PRESETS
from tournaments.algorithms import swiss
from tournaments.models import (
    BoardAdjustment,
    BoardSet,
    DeckStyle,
    EndRule,
    Entry,
    PenaltyRule,
    Stage,
    TieBreak,
    category_label,
)
from tournaments.services import presets as preset_service
from tournaments.services import stages as stage_service
from tournaments.services.stages import DayShape

logger = logging.getLogger(__name__)

MAX_TIEBREAKS = len(TieBreak.choices)


# --------------------------------------------------------------------------- rule options


# What each option means at the table, said the way an organizer would say it.
OPTION_HELP = {
    "rebello": _("The king of denari is worth one point to the line that takes it."),
    "napola": _(
        "Ace, two and three of denari (and the following ones in sequence) score extra points."
    ),
    "primiera_missing_suit": _(
        "When a line has no card of one suit: it loses the primiera, or the suits both lines "
        "have are compared."
    ),
    "void_three_kings": _("A deal with three or four kings on the table at the start is void."),
    "forced_capture": _("A player who can capture must capture."),
    "carte_viste": _("Cards already played may be looked at."),
    "carte_scoperte": _("Partners play with their cards face up to each other."),
}

CHOICE_LABELS = {
    "loses": _("the line loses the primiera"),
    "compare_present": _("compare the suits both lines have"),
}


def rule_options(variant):
    """``[(name, kind, label, choices, default)]`` of the rule options a variant offers, from
    the engine's registry (deck style is a field of its own)."""
    language = (get_language() or "it")[:2]
    defaults = PRESETS["default_options"].get(variant, {})
    offered = []
    for name, spec in PRESETS["options"].items():
        if spec["type"] == "deck_style" or name not in defaults:
            continue
        label = spec.get(language) or spec.get("en") or name
        offered.append((name, spec["type"], label, spec.get("choices", []), defaults[name]))
    return offered


TIEBREAK_HELP = {
    TieBreak.MP: _("the larger total point margin over all matches"),
    TieBreak.HEAD_TO_HEAD: _("the VP won in the matches between the lines that are level"),
    TieBreak.POINTS_SCORED: _("the most points scored at the table"),
    TieBreak.MATCHES_WON: _("the most matches won"),
    TieBreak.STRENGTH: _("the VP of the opponents a line has beaten"),
    TieBreak.RATING: _("the higher rating before the tournament"),
    TieBreak.LOTS: _("a drawing of lots, stored so it can be checked"),
}


FORMATS = [
    ("groups_knockout", _("Groups, then a knock-out (as at the Valliadi)")),
    ("groups", _("Groups only (round robin)")),
    ("knockout", _("Knock-out only")),
    ("open", _("Open day: Mitchell rounds, Danish rounds, then a knock-out")),
    ("swiss_knockout", _("Swiss rounds, then a knock-out")),
]


def swiss_cap_help():
    """The Swiss cap, said before a Swiss stage is built (with what to use instead)."""
    return _(
        "A Swiss stage pairs at most %(max)d lines: beyond that the FIDE Dutch pairing takes "
        "minutes a round. For a larger open choose Danish rounds, which pair any number at once."
    ) % {"max": swiss.MAX_LINES}


class TournamentWizardForm(forms.Form):
    preset = forms.ChoiceField(
        label=_("Starting rules"),
        help_text=_("A set of rules to start from; every field below can still be changed."),
    )
    name = forms.CharField(label=_("Tournament name"), max_length=200)
    start_date = forms.DateField(
        label=_("First day"), widget=forms.DateInput(attrs={"type": "date"})
    )
    end_date = forms.DateField(
        label=_("Last day"),
        required=False,
        widget=forms.DateInput(attrs={"type": "date"}),
        help_text=_("Leave empty for a one-day tournament."),
    )
    venue = forms.CharField(label=_("Venue"), max_length=200, required=False)
    is_public = forms.BooleanField(
        label=_("Public"),
        required=False,
        initial=True,
        help_text=_("Anyone can follow a public tournament's pages; a private one is hidden."),
    )
    seats_per_line = forms.TypedChoiceField(
        label=_("Players per line"),
        coerce=int,
        choices=[
            (1, _("1 (singles)")),
            (2, _("2 (pairs)")),
            (3, _("3 (trios)")),
        ],
    )
    deck_style = forms.ChoiceField(label=_("Cards"), choices=DeckStyle.choices)
    time_limit_min = forms.IntegerField(
        label=_("Time limit (minutes)"),
        required=False,
        min_value=1,
        max_value=600,
        help_text=_("Leave empty when matches are played to the end."),
    )
    format = forms.ChoiceField(label=_("Format"), choices=FORMATS, initial="groups_knockout")
    double_round_robin = forms.BooleanField(
        label=_("Play every group twice (home and away)"), required=False
    )
    third_place_match = forms.BooleanField(
        label=_("Third-place match in the knock-out"), required=False, initial=True
    )
    mitchell_rounds = forms.IntegerField(
        label=_("Mitchell rounds"),
        min_value=1,
        max_value=30,
        initial=3,
        required=False,
        help_text=_("Open day: rounds of the Mitchell movement that opens it."),
    )
    danish_rounds = forms.IntegerField(
        label=_("Danish rounds"),
        min_value=1,
        max_value=30,
        initial=3,
        required=False,
        help_text=_(
            "Open day: Danish rounds after the Mitchell; the Mitchell score is carried over."
        ),
    )
    swiss_rounds = forms.IntegerField(
        label=_("Swiss rounds"),
        min_value=1,
        max_value=30,
        initial=5,
        required=False,
    )
    knockout_size = forms.TypedChoiceField(
        label=_("Lines in the knock-out"),
        coerce=int,
        choices=[(4, "4"), (8, "8"), (16, "16"), (32, "32")],
        initial=8,
        required=False,
        empty_value=None,
        help_text=_(
            "Open day and Swiss: the top lines of the combined ranking seed the knock-out."
        ),
    )

    def __init__(self, *args, preset="", **kwargs):
        super().__init__(*args, **kwargs)
        choices = preset_service.preset_choices()
        cast(forms.ChoiceField, self.fields["preset"]).choices = choices
        slugs = [slug for slug, _label in choices]
        self.preset_slug = preset if preset in slugs else slugs[0]
        chosen = preset_service.load_presets()[self.preset_slug]
        self.preset_data = chosen
        self.variant = chosen["variant"]
        self.fields["preset"].initial = self.preset_slug
        self.fields["start_date"].initial = datetime.date.today()
        self.fields["swiss_rounds"].help_text = swiss_cap_help()
        self.fields["seats_per_line"].initial = chosen["seats_per_line"]
        self.fields["deck_style"].initial = chosen["deck_style"]
        if chosen.get("time_limit_s"):
            self.fields["time_limit_min"].initial = chosen["time_limit_s"] // 60
        given = chosen.get("options") or {}
        self.option_names = []
        for name, kind, label, choices, default in rule_options(self.variant):
            field_name = f"option_{name}"
            initial = given.get(name, default)
            field: forms.Field
            if kind == "bool":
                field = forms.BooleanField(label=label, required=False, initial=initial)
            else:
                field = forms.ChoiceField(
                    label=label,
                    initial=initial,
                    choices=[(c, CHOICE_LABELS.get(c, c)) for c in choices],
                )
            field.help_text = OPTION_HELP.get(name, "")
            self.fields[field_name] = field
            self.option_names.append((name, field_name))
        tiebreak_choices = [("", pgettext_lazy("no tie-break", "—"))] + [
            (value, label) for value, label in TieBreak.choices
        ]
        self.tiebreak_fields = []
        for index in range(MAX_TIEBREAKS):
            field_name = f"tiebreak_{index + 1}"
            tiebreaks = chosen.get("tiebreaks", [])
            self.fields[field_name] = forms.ChoiceField(
                label=_("Criterion %(n)d") % {"n": index + 1},
                choices=tiebreak_choices,
                required=False,
                initial=tiebreaks[index] if index < len(tiebreaks) else "",
            )
            self.tiebreak_fields.append(field_name)

    # grouped for the template
    def general_fields(self):
        names = ["name", "start_date", "end_date", "venue", "is_public"]
        return [self[name] for name in names]

    def rule_fields(self):
        names = ["seats_per_line", "deck_style", "time_limit_min"]
        return [self[name] for name in names] + [self[f] for _n, f in self.option_names]

    def format_fields(self):
        names = (
            "format",
            "double_round_robin",
            "mitchell_rounds",
            "danish_rounds",
            "swiss_rounds",
            "knockout_size",
            "third_place_match",
        )
        return [self[name] for name in names]

    def tiebreak_bound_fields(self):
        return [self[name] for name in self.tiebreak_fields]

    def tiebreak_help(self):
        return [(label, TIEBREAK_HELP.get(value, "")) for value, label in TieBreak.choices]

    def clean(self):
        super().clean()
        cleaned = self.cleaned_data
        chosen = [cleaned.get(f) for f in self.tiebreak_fields if cleaned.get(f)]
        if len(set(chosen)) != len(chosen):
            raise ValidationError(_("Each tie-break can be chosen once."))
        start, end = cleaned.get("start_date"), cleaned.get("end_date")
        if start and end and end < start:
            self.add_error("end_date", _("The tournament cannot end before it starts."))
        cleaned["tiebreaks"] = chosen
        return cleaned

    def tournament_fields(self):
        data = self.cleaned_data
        options = dict(self.preset_data.get("options") or {})
        for name, field_name in self.option_names:
            options[name] = data[field_name]
        minutes = data.get("time_limit_min")
        return {
            "name": data["name"],
            "start_date": data["start_date"],
            "end_date": data.get("end_date"),
            "venue": data.get("venue", ""),
            "is_public": data.get("is_public", False),
            "seats_per_line": data["seats_per_line"],
            "deck_style": data["deck_style"],
            "time_limit_s": minutes * 60 if minutes else None,
            "options": options,
            "tiebreaks": data["tiebreaks"],
        }

    def stages(self):
        """The day's stages from the chosen format (``tournaments.services.stages``)."""
        data = self.cleaned_data
        shape = DayShape(
            groups_double=data.get("double_round_robin", False),
            mitchell_rounds=data.get("mitchell_rounds") or 3,
            danish_rounds=data.get("danish_rounds") or 3,
            swiss_rounds=data.get("swiss_rounds") or 5,
            knockout=data.get("knockout_size") or 8,
            third_place_match=data.get("third_place_match", False),
        )
        return stage_service.day_stages(data["format"], shape)


# --------------------------------------------------------------------------- lines


class CategoryField(forms.CharField):
    """The category a line plays in: a built-in one offered in a list, or any name typed."""

    def __init__(self, **kwargs):
        kwargs.setdefault("label", _("Category"))
        kwargs.setdefault("max_length", 60)
        kwargs.setdefault("required", False)
        kwargs.setdefault(
            "help_text",
            _("Men, women, mixed, over 63, or a name of your own (a club, a municipality)."),
        )
        kwargs.setdefault("widget", forms.TextInput(attrs={"list": "categories"}))
        super().__init__(**kwargs)


class LineForm(forms.Form):
    """One line: its name, its players (as many as the tournament seats) and a seed."""

    name = forms.CharField(label=_("Line name"), max_length=160)
    seed = forms.IntegerField(
        label=_("Seed"),
        required=False,
        min_value=1,
        help_text=_("Empty: after the last seed."),
    )
    club = forms.CharField(
        label=_("Club or municipality"),
        max_length=120,
        required=False,
        help_text=_("The one the line represents; stages can keep its lines apart."),
    )
    city = forms.CharField(label=_("City"), max_length=80, required=False)
    category = CategoryField()

    def __init__(self, *args, tournament, **kwargs):
        super().__init__(*args, **kwargs)
        self.tournament = tournament
        for n in range(1, tournament.seats_per_line + 1):
            self.fields[f"player{n}"] = forms.CharField(
                label=_("Player %(n)d") % {"n": n}, max_length=120
            )
            self.fields[f"fid{n}"] = forms.CharField(
                label=_("Federation id of player %(n)d") % {"n": n},
                max_length=40,
                required=False,
            )

    def players(self):
        return [
            (self.cleaned_data[f"player{n}"], self.cleaned_data.get(f"fid{n}", ""))
            for n in range(1, self.tournament.seats_per_line + 1)
        ]

    def service_kwargs(self):
        data = self.cleaned_data
        return {
            "name": data["name"],
            "players": self.players(),
            "club": data.get("club", ""),
            "city": data.get("city", ""),
            "seed": data.get("seed"),
            "category": data.get("category", ""),
        }


class EditLineForm(forms.Form):
    name = forms.CharField(label=_("Line name"), max_length=160)
    seed = forms.IntegerField(label=_("Seed"), required=False, min_value=1)
    club = forms.CharField(
        label=_("Club or municipality"),
        max_length=120,
        required=False,
        help_text=_("The one the line represents; stages can keep its lines apart."),
    )
    category = CategoryField()

    def __init__(self, *args, tournament, entry: Entry, **kwargs):
        super().__init__(*args, **kwargs)
        self.members = list(entry.line.members.select_related("player").order_by("position"))
        self.fields["name"].initial = entry.line.name
        self.fields["seed"].initial = entry.seed
        self.fields["club"].initial = entry.line.club
        self.fields["category"].initial = category_label(entry.category)
        for member in self.members:
            n = member.position + 1
            self.fields[f"player{n}"] = forms.CharField(
                label=_("Player %(n)d") % {"n": n}, max_length=120, initial=member.player.name
            )

    def service_kwargs(self):
        data = self.cleaned_data
        return {
            "name": data["name"],
            "seed": data.get("seed"),
            "category": data.get("category", ""),
            "club": data.get("club", ""),
            "player_names": {
                member.position: data[f"player{member.position + 1}"] for member in self.members
            },
        }


class ForbidPairingForm(forms.Form):
    """Two lines of the tournament that must never meet."""

    line_a = forms.TypedChoiceField(label=_("Line"), coerce=int)
    line_b = forms.TypedChoiceField(label=_("Never meets"), coerce=int)
    note = forms.CharField(
        label=_("Why (for the log)"),
        max_length=200,
        required=False,
        help_text=_("For example: husband and wife, or the club's two pairs at a qualifier."),
    )

    def __init__(self, *args, tournament, **kwargs):
        super().__init__(*args, **kwargs)
        lines = list(
            Entry.objects.filter(tournament=tournament, withdrawn=False)
            .order_by("line__name", "line_id")
            .values_list("line_id", "line__name")
        )
        cast(forms.ChoiceField, self.fields["line_a"]).choices = lines
        cast(forms.ChoiceField, self.fields["line_b"]).choices = lines

    def clean(self):
        cleaned = super().clean() or {}
        if cleaned.get("line_a") is not None and cleaned.get("line_a") == cleaned.get("line_b"):
            raise ValidationError(_("Choose two different lines."))
        return cleaned


class ImportLinesForm(forms.Form):
    file = forms.FileField(
        label=_("CSV file"),
        required=False,
        help_text=_("A header row, then one line per row; comma, semicolon or tab separated."),
    )
    pasted = forms.CharField(
        label=_("Or paste from a spreadsheet"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 8, "spellcheck": "false"}),
        help_text=_(
            "Copy the cells (line name, then the players) and paste them here; a header row "
            "is optional."
        ),
    )

    def clean(self):
        super().clean()
        cleaned = self.cleaned_data
        if not cleaned.get("file") and not (cleaned.get("pasted") or "").strip():
            raise ValidationError(_("Choose a file or paste the lines."))
        return cleaned

    def source(self, tournament):
        """The text to import: the file, or the pasted block with a header added if absent."""
        if self.cleaned_data.get("file"):
            return self.cleaned_data["file"]
        text = self.cleaned_data["pasted"].strip("\n")
        first = text.splitlines()[0].casefold() if text else ""
        from tournaments.services.entries import COLUMNS

        known = {name for names in COLUMNS.values() for name in names}
        cells = [cell.strip() for cell in first.split("\t")]
        if not any(cell in known for cell in cells):
            header = ["linea"] + [f"giocatore {n}" for n in range(1, tournament.seats_per_line + 1)]
            text = "\t".join(header) + "\n" + text
        return io.StringIO(text).read()


# --------------------------------------------------------------------------- stages


def errors_sentence(form: forms.BaseForm) -> str:
    """A refused form's errors as one message, for the desk's flash after a redirect."""
    return " ".join(str(error) for errors in form.errors.values() for error in errors)


class CategoryPlacesField(forms.CharField):
    """Places kept for categories as an organizer writes them, one a line or separated by
    semicolons: "Donne: 2; Over 63: 1" (the service stores each category as entries do)."""

    def __init__(self, **kwargs):
        kwargs.setdefault("widget", forms.Textarea(attrs={"rows": 2}))
        super().__init__(**kwargs)

    def prepare_value(self, value):
        if isinstance(value, dict):
            return "\n".join(f"{category_label(name)}: {n}" for name, n in value.items())
        return value

    def to_python(self, value):
        text = super().to_python(value)
        places: dict[str, int] = {}
        for part in (text or "").replace(";", "\n").splitlines():
            if not part.strip():
                continue
            name, sep, count = part.rpartition(":")
            count = count.strip()
            # ASCII digits only: "²" is a digit to str.isdigit() but not to int()
            if not (sep and name.strip() and count.isascii() and count.isdigit() and int(count)):
                raise ValidationError(
                    _("Write each category as “name: places”, for example “Donne: 2”."),
                    code="invalid",
                )
            places[name.strip()] = int(count)
        return places


class StageForm(forms.ModelForm):
    """A stage's settings before it starts; saved by ``tournaments.services.stages``."""

    category_places = CategoryPlacesField(
        label=_("Places kept for categories"),
        required=False,
        help_text=_(
            "Danish, Swiss, Mitchell: of the lines going on, places for the best lines of a "
            "category whatever their place overall, e.g. “Donne: 2; Over 63: 1”."
        ),
    )

    stage_tiebreaks = forms.MultipleChoiceField(
        label=_("Stage tie-breaks"),
        choices=TieBreak.choices,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text=_("Danish, Swiss, Mitchell: empty means the tournament's tie-breaks."),
    )

    class Meta:
        model = Stage
        fields = [name for name in stage_service.EDITABLE_FIELDS if name != "stage_tiebreaks"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["name"].required = False
        self.fields["name"].help_text = _("Empty: the kind's name.")
        self.fields["kind"].help_text = swiss_cap_help()
        if self.instance.pk:
            self.fields["stage_tiebreaks"].initial = self.instance.stage_tiebreaks

    def _post_clean(self):
        # the service validates the whole stage (with the tournament) when it saves
        pass

    def service_fields(self):
        data = dict(self.cleaned_data)
        return {name: data[name] for name in stage_service.EDITABLE_FIELDS if name in data}


class NewStageForm(StageForm):
    position = forms.IntegerField(
        label=_("Place in the day"),
        min_value=1,
        required=False,
        help_text=_("1 for the first stage; empty: after the last one."),
    )


class DuplicateSessionForm(forms.Form):
    """A duplicate session in one step (``services.duplicate.create_session``): the stage, the
    movement, the boards and their scoring; the variant and the seats are the tournament's, the
    seed a fresh secret one from the engine."""

    name = forms.CharField(
        label=_("Name"),
        max_length=100,
        required=False,
        help_text=_("Empty: the kind's name."),
    )
    movement = forms.ChoiceField(
        label=_("Movement"),
        choices=BoardSet.Movement.choices,
        initial=BoardSet.Movement.MITCHELL,
        help_text=_(
            "Mitchell for a large field (one winner per direction, or one overall with the "
            "arrow switch); Howell for a small one."
        ),
    )
    boards_per_round = forms.IntegerField(
        label=_("Boards a round"),
        min_value=1,
        max_value=36,
        help_text=_("A match plays its round's boards as its deals, one deal each."),
    )
    rounds = forms.IntegerField(
        label=_("Rounds"),
        min_value=1,
        max_value=200,
        required=False,
        help_text=_(
            "Empty: the full movement (a Mitchell one round per table, a Howell one fewer than "
            "the lines)."
        ),
    )
    scoring = forms.ChoiceField(
        label=_("Scoring"),
        choices=BoardSet.Scoring.choices,
        initial=BoardSet.Scoring.MATCHPOINTS,
    )
    arrow_switch = forms.BooleanField(
        label=_("Arrow switch in the last round"),
        required=False,
        help_text=_("Mitchell: the lines of each table swap seats, and one ranking replaces two."),
    )
    relay = forms.BooleanField(
        label=_("Relay table instead of the skip"),
        required=False,
        help_text=_(
            "Mitchell with an even number of tables: the first and the last table share a "
            "board set and a bye-stand rests one, so every North-South line meets every "
            "East-West line; without it the East-West lines skip a table halfway. Two tables "
            "always play the relay."
        ),
    )

    def __init__(self, *args, tournament, **kwargs):
        super().__init__(*args, **kwargs)
        by_deals = tournament.end_rule == EndRule.DEALS
        self.fields["boards_per_round"].initial = tournament.end_value if by_deals else 2
        self.variant_words = _("%(variant)s, %(seats)s players a table") % {
            "variant": tournament.get_variant_display(),
            "seats": tournament.seats,
        }


# --------------------------------------------------------------------------- prizes


class PrizeForm(forms.Form):
    """One prize of the list: a place overall or within a category, its worth and its label."""

    category = CategoryField(help_text=_("Empty: a place of the overall ranking."))
    place = forms.IntegerField(label=_("Place"), min_value=1, max_value=999)
    value = forms.IntegerField(
        label=_("Value"),
        min_value=0,
        max_value=10_000_000,
        help_text=_(
            "The prize's worth (for example in euros): higher values are handed out first."
        ),
    )
    label = forms.CharField(label=_("Label"), max_length=120)


# --------------------------------------------------------------------------- penalties


class PenaltyRuleForm(forms.Form):
    """A row of the penalty table."""

    label = forms.CharField(
        label=_("Label"),
        max_length=120,
        help_text=_("For example: “Late 5 to 10 minutes”."),
    )
    kind = forms.ChoiceField(label=_("Kind"), choices=PenaltyRule.Kind.choices)
    vp = forms.IntegerField(
        label=_("VP deducted"),
        min_value=0,
        max_value=1000,
        required=False,
        initial=0,
        help_text=_("For a deduction only."),
    )


class PenaltyForm(forms.Form):
    """The referee's penalty in one match: which line, which row of the table, and why."""

    line = forms.TypedChoiceField(label=_("Line"), coerce=int)
    rule = forms.TypedChoiceField(label=_("Penalty"), coerce=int)
    reason = forms.CharField(label=_("Reason"), max_length=300)

    def __init__(self, *args, match, rules, **kwargs):
        super().__init__(*args, **kwargs)
        line_field = cast(forms.TypedChoiceField, self.fields["line"])
        line_field.choices = [(line.pk, line.name) for line in (match.home, match.away) if line]
        rule_field = cast(forms.TypedChoiceField, self.fields["rule"])
        rule_field.choices = [(rule.pk, str(rule)) for rule in rules]


class BoardRulingForm(forms.Form):
    """The director's ruling on one board of a duplicate match: which board, what happened, who
    was at fault (the lines named by their direction), and a note for the log."""

    board = forms.TypedChoiceField(label=_("Board"), coerce=int)
    kind = forms.ChoiceField(label=_("What happened"), choices=BoardAdjustment.Kind.choices)
    fault = forms.ChoiceField(label=_("Who was at fault"))
    deck = forms.CharField(
        label=_("Deck held"),
        max_length=20,
        required=False,
        help_text=_(
            "Only for a board played with a misprepared deck: give the same name (for example "
            "“B”) at every table that held the same deck; they are compared only among "
            "themselves."
        ),
    )
    note = forms.CharField(label=_("Note"), max_length=200, required=False)

    def __init__(self, *args, match, boards, **kwargs):
        super().__init__(*args, **kwargs)
        board_field = cast(forms.TypedChoiceField, self.fields["board"])
        board_field.choices = [(n, str(n)) for n in boards]
        home = match.home.name if match.home_id else "–"
        away = match.away.name if match.away_id else "–"
        fault_field = cast(forms.ChoiceField, self.fields["fault"])
        fault_field.choices = [
            (BoardAdjustment.Fault.NEITHER, _("Neither line")),
            (BoardAdjustment.Fault.NORTH_SOUTH, _("North-South: %(line)s") % {"line": home}),
            (BoardAdjustment.Fault.EAST_WEST, _("East-West: %(line)s") % {"line": away}),
            (BoardAdjustment.Fault.BOTH, _("Both lines")),
        ]


# --------------------------------------------------------------------------- a round's slips

# What may stand between the figures of a slip's row: spaces, or marks some scorers type to
# keep the two lines apart ("7 1 1 1 1 | 2 0 0 0 0").
_SLIP_SEPARATORS = re.compile(r"[\s,;|/–-]+")


def slip_deals(text: str, categories: Sequence[str]) -> list[dict[str, object]]:
    """A table's slip as typed at the desk: one deal a line, the figures of the slip's row left
    to right (the first line's categories, then the second line's; each line's total may follow
    its categories, as on the slip). Returns the ``deals`` of ``results.save_result``, which
    checks them (a total that is not the sum of its categories, a deal no play gives); a line
    that cannot be read raises ``ValidationError``."""
    width = len(categories)
    deals: list[dict[str, object]] = []
    for number, line in enumerate((line for line in text.splitlines() if line.strip()), start=1):
        cells = [cell for cell in _SLIP_SEPARATORS.split(line.strip()) if cell]
        for cell in cells:
            if not (cell.isascii() and cell.isdigit()):
                raise ValidationError(
                    _("Deal %(n)d: “%(cell)s” is not a figure.") % {"n": number, "cell": cell},
                    code="figure",
                )
        if len(cells) not in (2 * width, 2 * width + 2):
            raise ValidationError(
                _(
                    "Deal %(n)d: %(got)d figures; a deal has %(cells)d (the categories of both "
                    "lines, as on the slip) or %(totals)d (with each line's total)."
                )
                % {"n": number, "got": len(cells), "cells": 2 * width, "totals": 2 * width + 2},
                code="count",
            )
        figures = [int(cell) for cell in cells]
        with_totals = len(figures) == 2 * width + 2
        side_width = width + 1 if with_totals else width
        breakdown, points = [], []
        for side in (0, 1):
            row = figures[side * side_width : (side + 1) * side_width]
            by_category = dict(zip(categories, row[:width], strict=True))
            breakdown.append({key: value for key, value in by_category.items() if value})
            points.append(row[width] if with_totals else sum(row[:width]))
        deals.append({"points": points, "breakdown": breakdown})
    return deals


class RoundResultsForm(forms.Form):
    """A round's slips typed at the desk: per table, its deals (:func:`slip_deals`), whether
    its time limit ended it, and the version in force the page showed (``based_on``, as on the
    one-match form). Fields are named after the match: ``t<id>-deals``, ``t<id>-time``,
    ``t<id>-based_on``."""

    def __init__(self, *args, matches, categories, time_limited, **kwargs):
        super().__init__(*args, **kwargs)
        self.matches = list(matches)
        self.categories = list(categories)
        self.time_limited = time_limited
        for match in self.matches:
            self.fields[f"t{match.pk}-deals"] = forms.CharField(
                label=_("Table %(n)s, %(home)s against %(away)s: deals")
                % {
                    "n": match.table_number or "–",
                    "home": match.home.name,
                    "away": match.away.name,
                },
                required=False,
                strip=False,
                widget=forms.Textarea(
                    attrs={"rows": 2, "cols": 28, "spellcheck": "false", "autocomplete": "off"}
                ),
            )
            if time_limited:
                self.fields[f"t{match.pk}-time"] = forms.BooleanField(
                    label=_("Table %(n)s: the time limit was reached")
                    % {"n": match.table_number or "–"},
                    required=False,
                )
            self.fields[f"t{match.pk}-based_on"] = forms.CharField(
                required=False,
                widget=forms.HiddenInput,
                initial="" if match.in_force_number is None else match.in_force_number,
            )

    @staticmethod
    def posted_match_ids(data) -> list[int]:
        """The matches a page sent a typed slip for (``t<id>-deals`` not blank)."""
        found = []
        for name, value in data.items():
            head, _sep, tail = name.partition("-")
            number = head[1:]
            # an id no table can have (past a 64-bit key) names no table, not a database error
            readable = tail == "deals" and number.isascii() and number.isdigit()
            if readable and int(number) < 2**63 and str(value).strip():
                found.append(int(number))
        return found

    def rows(self):
        """Per table, for the template: the match and its bound fields."""
        return [
            {
                "match": match,
                "deals": self[f"t{match.pk}-deals"],
                "time": self[f"t{match.pk}-time"] if self.time_limited else None,
                "based_on": self[f"t{match.pk}-based_on"],
            }
            for match in self.matches
        ]

    def clean(self):
        cleaned = super().clean() or {}
        self.deals = {}
        for match in self.matches:
            name = f"t{match.pk}-deals"
            text = cleaned.get(name) or ""
            if not text.strip():
                continue
            try:
                self.deals[match.pk] = slip_deals(text, self.categories)
            except ValidationError as error:
                self.add_error(name, error)
        return cleaned

    def typed_tables(self):
        """The tables with a slip typed and read (those that cannot be read carry their error),
        as ``round_results.TableResult``; ``based_on`` ``None`` when the page did not send it
        (the service refuses such a table, as the one-match form does)."""
        from tournaments.services.round_results import TableResult

        if not hasattr(self, "deals"):
            self.full_clean()
        return [
            TableResult(
                match_id=match.pk,
                deals=self.deals[match.pk],
                time_expired=bool(self.cleaned_data.get(f"t{match.pk}-time")),
                based_on=self.data.get(f"t{match.pk}-based_on"),
            )
            for match in self.matches
            if match.pk in self.deals
        ]

    def refuse(self, match_id, message):
        """Show the service's refusal of a table in its row."""
        self.add_error(f"t{match_id}-deals", message)
