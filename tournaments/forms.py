"""Organizer forms: tournament from a preset, CSV import, result entry, stage actions."""

from __future__ import annotations

import datetime

from django import forms
from django.forms import formset_factory
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from tournaments.models import Outcome


def result_categories(tournament):
    """``[(key, label)]``: the breakdown columns of a deal of ``tournament``, from the engine's
    variant registry (the variant's categories under its options)."""
    from tournaments.views.selectors import category_label, scoring_categories

    return [(key, category_label(key)) for key in scoring_categories(tournament)]


class PresetTournamentForm(forms.Form):
    preset = forms.ChoiceField(label=_("preset"))
    name = forms.CharField(label=_("name"), max_length=200)
    slug = forms.SlugField(
        label=_("slug"), required=False, help_text=_("Leave empty to derive it from the name.")
    )
    start_date = forms.DateField(label=_("start date"), initial=datetime.date.today)
    end_date = forms.DateField(label=_("end date"), required=False)
    venue = forms.CharField(label=_("venue"), max_length=200, required=False)
    is_public = forms.BooleanField(label=_("public"), required=False, initial=True)
    with_groups = forms.BooleanField(
        label=_("round-robin groups stage"), required=False, initial=True
    )
    double_round_robin = forms.BooleanField(label=_("double round robin"), required=False)
    with_knockout = forms.BooleanField(label=_("knock-out stage"), required=False, initial=True)
    third_place_match = forms.BooleanField(
        label=_("third-place match"), required=False, initial=True
    )

    def __init__(self, *args, **kwargs):
        from tournaments.services.presets import preset_choices

        super().__init__(*args, **kwargs)
        self.fields["preset"].choices = preset_choices()

    def clean_slug(self):
        from tournaments.models import Tournament

        slug = self.cleaned_data.get("slug")
        if slug and Tournament.objects.filter(slug=slug).exists():
            raise forms.ValidationError(_("A tournament with this slug already exists."))
        return slug

    def clean(self):
        data = super().clean()
        if (
            data.get("end_date")
            and data.get("start_date")
            and data["end_date"] < data["start_date"]
        ):
            self.add_error("end_date", _("The tournament cannot end before it starts."))
        return data

    def stages(self):
        data = self.cleaned_data
        stages = []
        if data.get("with_groups"):
            stages.append(
                {
                    "name": str(_("Groups")),
                    "kind": "round_robin",
                    "double_round_robin": data.get("double_round_robin", False),
                }
            )
        if data.get("with_knockout"):
            stages.append(
                {
                    "name": str(_("Knock-out")),
                    "kind": "knockout",
                    "third_place_match": data.get("third_place_match", False),
                }
            )
        return stages


class LineImportForm(forms.Form):
    file = forms.FileField(
        label=_("CSV file"),
        help_text=_(
            "Columns: line, player 1, player 2, player 3, federation id 1, federation id 2, "
            "federation id 3, club, city, seed (a header row is required; comma or semicolon)."
        ),
    )


class CreateGroupsForm(forms.Form):
    n_groups = forms.IntegerField(label=_("number of groups"), min_value=1, max_value=512)


class CloseStageForm(forms.Form):
    per_group = forms.IntegerField(
        label=_("qualifiers per group"),
        min_value=1,
        max_value=64,
        initial=2,
        help_text=_("The top K of each group go to the next knock-out stage, crossed."),
    )


class ResultForm(forms.Form):
    """Outcome of a match; the deals come from :data:`DealFormSet`."""

    outcome = forms.ChoiceField(
        label=_("outcome"),
        choices=[(value, label) for value, label in Outcome.choices if value != Outcome.BYE],
        initial=Outcome.COMPLETED,
    )
    offender = forms.ChoiceField(
        label=_("offending line"),
        required=False,
        choices=[
            ("", "—"),
            ("home", pgettext_lazy("side of a match", "Home")),
            ("away", pgettext_lazy("side of a match", "Away")),
        ],
        help_text=_("For a timeout, abandon or forfeit."),
    )
    time_expired = forms.BooleanField(
        label=_("the match's time limit was reached"),
        required=False,
        help_text=_("The match's time limit was reached: the line ahead wins."),
    )
    based_on = forms.CharField(required=False, widget=forms.HiddenInput)
    """The version in force when the form was shown: a save over a newer one is refused."""


class DealForm(forms.Form):
    """One deal of the admin's result form; ``categories`` are :func:`result_categories`."""

    tiebreak = forms.BooleanField(label=_("tie-break"), required=False)
    penalty = forms.BooleanField(label=_("penalty"), required=False)
    last_capture = forms.ChoiceField(
        label=_("last capture"),
        required=False,
        choices=[
            ("", "—"),
            ("home", pgettext_lazy("side of a match", "Home")),
            ("away", pgettext_lazy("side of a match", "Away")),
        ],
    )

    def __init__(self, *args, categories=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.categories = list(categories)
        for side in ("home", "away"):
            self.fields[f"{side}_points"] = forms.IntegerField(
                label=_("points"), min_value=0, max_value=99, required=False
            )
            for key, label in self.categories:
                self.fields[f"{side}_{key}"] = forms.IntegerField(
                    label=label, min_value=0, max_value=99, required=False
                )

    def side_fields(self, side):
        return [self[f"{side}_points"]] + [self[f"{side}_{key}"] for key, _label in self.categories]

    def home_fields(self):
        return self.side_fields("home")

    def away_fields(self):
        return self.side_fields("away")

    def is_blank(self):
        data = getattr(self, "cleaned_data", {}) or {}
        return not any(
            data.get(f"{side}_{key}")
            for side in ("home", "away")
            for key in ["points"] + [k for k, _label in self.categories]
        ) and not (data.get("tiebreak") or data.get("penalty"))

    def as_deal(self):
        data = self.cleaned_data
        deal = {"points": [], "breakdown": []}
        for side in ("home", "away"):
            breakdown = {key: data.get(f"{side}_{key}") or 0 for key, _label in self.categories}
            breakdown = {k: v for k, v in breakdown.items() if v}
            points = data.get(f"{side}_points")
            deal["points"].append(sum(breakdown.values()) if points is None else points)
            deal["breakdown"].append(breakdown)
        deal["tiebreak"] = bool(data.get("tiebreak"))
        deal["penalty"] = bool(data.get("penalty"))
        if data.get("last_capture"):
            deal["last_capture"] = 0 if data["last_capture"] == "home" else 1
        return deal


DealFormSet = formset_factory(DealForm, extra=0, min_num=1, max_num=40, validate_max=True)


def deals_from_formset(formset):
    """Deals in order, blank trailing rows dropped."""
    deals = [form.as_deal() for form in formset.forms if not form.is_blank()]
    return deals
